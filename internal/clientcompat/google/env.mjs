// What every suite here shares: the service's root URL (the Gemini clients add the API version
// themselves) and the per-test timeout.

const url = process.env.MOCKGATEWAY_URL;
if (!url || !/^https?:\/\/[^/]+\/?$/.test(url)) {
  throw new Error('MOCKGATEWAY_URL must be the service\'s root URL, e.g. http://127.0.0.1:8080 (got ' + JSON.stringify(url) + ')');
}

export const BASE_URL = url.replace(/\/$/, '');
export const TIMEOUT = 30_000; // per test; nothing here should take more than a second or two

// keyedService is a service started with --api-key and that key (key.test.mjs):
// MOCKGATEWAY_KEYED_URL, its root URL, and MOCKGATEWAY_KEY.
export function keyedService() {
  const keyed = process.env.MOCKGATEWAY_KEYED_URL;
  const key = process.env.MOCKGATEWAY_KEY;
  if (!keyed || !/^https?:\/\/[^/]+\/?$/.test(keyed) || !key) {
    throw new Error('MOCKGATEWAY_KEYED_URL must be the root URL of a service started with --api-key, and MOCKGATEWAY_KEY that key (got ' + JSON.stringify(keyed) + ')');
  }
  return { url: keyed.replace(/\/$/, ''), key };
}
