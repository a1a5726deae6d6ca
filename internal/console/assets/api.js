// api.js: the console's requests. The local key, once entered, lives in this module's memory
// only (never storage, never the URL) and is sent as Authorization: Bearer on every request.
// A 401 asks for the key again through the handler app.js installs.

let key = '';
let onUnauthorized = () => {};

export function setKey(k) { key = k; }
export function hasKey() { return key !== ''; }
export function whenUnauthorized(fn) { onUnauthorized = fn; }

// ApiError is a non-2xx answer: status and the error envelope's code and message when it has one.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

function headers(extra) {
  const h = new Headers(extra || {});
  if (key) h.set('Authorization', 'Bearer ' + key);
  return h;
}

async function failure(resp) {
  let code = '', message = '';
  try {
    const body = await resp.json();
    code = body?.error?.code || '';
    message = body?.error?.message || '';
  } catch { /* not the JSON envelope */ }
  if (resp.status === 401) onUnauthorized();
  return new ApiError(resp.status, code, message || `${resp.status} ${resp.statusText}`);
}

// get fetches path and returns the response's text; it throws ApiError on a non-2xx answer.
export async function getText(path) {
  const resp = await fetch(path, { headers: headers(), cache: 'no-store' });
  if (!resp.ok) throw await failure(resp);
  return resp.text();
}

export async function getJSON(path) {
  return JSON.parse(await getText(path));
}

// probe fetches path without the key and returns the status: how the page learns whether a key
// is required (401) without sending one.
export async function probeStatus(path) {
  const resp = await fetch(path, { cache: 'no-store' });
  await resp.arrayBuffer();
  return resp.status;
}

// post sends a JSON body and returns the Response itself; its body is the caller's to drain.
export async function post(path, body) {
  return fetch(path, {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json' }),
    body: JSON.stringify(body),
    cache: 'no-store',
  });
}

export function verifyKey(k) {
  return fetch('/_mock/journal?limit=1', { headers: { Authorization: 'Bearer ' + k }, cache: 'no-store' })
    .then(async (r) => { await r.arrayBuffer(); return r.status; });
}
