// What every suite here shares: the service's root URL (the Gemini clients add the API version
// themselves) and the per-test timeout.

const url = process.env.MOCKGATEWAY_URL;
if (!url || !/^https?:\/\/[^/]+\/?$/.test(url)) {
  throw new Error('MOCKGATEWAY_URL must be the service\'s root URL, e.g. http://127.0.0.1:8080 (got ' + JSON.stringify(url) + ')');
}

export const BASE_URL = url.replace(/\/$/, '');
export const TIMEOUT = 30_000; // per test; nothing here should take more than a second or two
