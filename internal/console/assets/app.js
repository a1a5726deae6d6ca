// app.js: the console's entry point — routing (#/setup, #/calls, #/calls/<request id>), the local
// key prompt, and one poll loop that refreshes the health strip and the open view every second.

import { $, setText } from './dom.js';
import { setKey, hasKey, whenUnauthorized, probeStatus, verifyKey } from './api.js';
import { SetupView } from './setup.js';
import { CallsView } from './calls.js';
import { CallView } from './call.js';
import { Health } from './health.js';

const POLL_MS = 1000;

const state = { keyRequired: null, locked: false };
const health = new Health();
const setup = new SetupView(state);
const calls = new CallsView();
const call = new CallView(state);
let current = null;

// decode is decodeURIComponent that never throws: a malformed escape in a hand-typed or cut
// link (#/calls/%E0%A4%A) is shown as it was typed instead of leaving a blank page.
function decode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// route reads the hash: #/calls/<id>[?scope=<scope>] opens one call.
function route() {
  const hash = location.hash.replace(/^#/, '') || '/setup';
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  let view = 'setup';
  if (path.startsWith('/calls/') && path.length > '/calls/'.length) {
    view = 'call';
    call.show(decode(path.slice('/calls/'.length)), params.get('scope') ?? calls.scope);
  } else if (path.startsWith('/calls')) {
    view = 'calls';
  }
  for (const name of ['setup', 'calls', 'call']) $(`view-${name}`).hidden = name !== view;
  $('nav-setup').classList.toggle('active', view === 'setup');
  $('nav-calls').classList.toggle('active', view !== 'setup');
  document.body.dataset.view = view;
  current = { setup, calls, call }[view];
  if (view === 'calls') calls.lastText = null; // render what the next answer brings
  tick();
}

function askForKey(message) {
  state.locked = true;
  $('key-prompt').hidden = false;
  setText($('key-error'), message || '');
  $('key-input').focus();
}

whenUnauthorized(() => { if (!state.locked) askForKey(hasKey() ? 'The key was refused; enter it again.' : ''); });

$('key-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const k = $('key-input').value;
  let status;
  try {
    status = await verifyKey(k);
  } catch (err) {
    setText($('key-error'), `The service did not answer: ${err.message}`);
    return;
  }
  if (status < 200 || status >= 300) {
    setText($('key-error'), status === 401 ? 'That key was refused.' : `The service answered ${status}; try again.`);
    return;
  }
  setKey(k);
  $('key-input').value = '';
  $('key-prompt').hidden = true;
  state.locked = false;
  tick();
});

let running = false;
let again = false;
let timer = 0;

// tick refreshes the strip and the open view, then schedules the next one; never two at once (a
// tick asked for while one runs follows it at once).
async function tick() {
  clearTimeout(timer);
  if (running) {
    again = true;
    return;
  }
  running = true;
  again = false;
  try {
    const jobs = [health.refresh()];
    if (!state.locked && current) jobs.push(current.refresh());
    const results = await Promise.allSettled(jobs);
    for (const r of results) {
      if (r.status === 'rejected' && r.reason?.status === undefined) {
        console.error('console refresh:', r.reason); // a bug of the page, not an answer of the service
      }
    }
  } finally {
    running = false;
    timer = setTimeout(tick, again ? 0 : POLL_MS);
  }
}

async function start() {
  // Whether a key is required: the journal without one (401 means it is). Not a /v1 route, so the
  // probe is neither journaled nor counted among the client's calls.
  try {
    state.keyRequired = (await probeStatus('/_mock/journal?limit=1')) === 401;
  } catch {
    state.keyRequired = null;
    setText($('key-status'), 'unknown (the service did not answer)');
  }
  setup.renderSnippet();
  if (state.keyRequired) askForKey('');
  window.addEventListener('hashchange', route);
  route();
}

start();
