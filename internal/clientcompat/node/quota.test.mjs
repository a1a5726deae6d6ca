// The official openai Node SDK against a simulated quota (docs/simulation.md, Quotas and load):
// its retries wait out retry-after-ms and succeed; with retries off it throws RateLimitError
// carrying OpenAI's code, type and headers.
//
// Run:  npm ci && MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test quota.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI, { RateLimitError } from 'openai';

const BASE_URL = process.env.MOCKGATEWAY_BASE_URL;
if (!BASE_URL) throw new Error('MOCKGATEWAY_BASE_URL is not set (e.g. http://127.0.0.1:8080/v1)');
const TIMEOUT = 30_000;

// A client of its own key (each key is its own organization, with its own buckets) on a
// quota of two requests per three seconds, counting the requests it sends.
function client(key, maxRetries) {
  const sent = { n: 0 };
  const c = new OpenAI({
    baseURL: BASE_URL, apiKey: key, maxRetries,
    defaultHeaders: { 'x-mock-quota': 'rpm=2;window=3s' },
    fetch: (url, init) => { sent.n++; return fetch(url, init); },
  });
  return { c, sent };
}

const ask = { model: 'mock-chat', messages: [{ role: 'user', content: 'hello' }] };

describe('openai SDK and a quota', () => {
  test('its retries wait out retry-after and succeed', { timeout: TIMEOUT }, async () => {
    const { c, sent } = client(`sk-quota-retry-${process.pid}`, 3);
    for (const left of ['1', '0']) {
      const { response } = await c.chat.completions.create(ask).withResponse();
      assert.equal(response.headers.get('x-ratelimit-limit-requests'), '2');
      assert.equal(response.headers.get('x-ratelimit-remaining-requests'), left);
    }
    const start = Date.now();
    const { data, response } = await c.chat.completions.create(ask).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(sent.n, 4, 'the third call was refused once, then retried');
    assert.ok(Date.now() - start >= 1000, 'the retry waited for the bucket');
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '0');
  });

  test('with retries off: RateLimitError in OpenAI\'s words', { timeout: TIMEOUT }, async () => {
    const { c } = client(`sk-quota-off-${process.pid}`, 0);
    await c.chat.completions.create(ask);
    await c.chat.completions.create(ask);
    await assert.rejects(c.chat.completions.create(ask), (err) => {
      assert.ok(err instanceof RateLimitError);
      assert.equal(err.status, 429);
      assert.equal(err.code, 'rate_limit_exceeded');
      assert.equal(err.type, 'requests');
      assert.match(err.message, /^429 Rate limit reached for mock-chat in organization org-[0-9a-f]{24} on requests per min \(RPM\): Limit 2, Used 2, Requested 1\. Please try again in /);
      assert.ok(Number(err.headers.get('retry-after')) >= 1);
      assert.ok(Number(err.headers.get('retry-after-ms')) > 0);
      return true;
    });
  });

  test('the Responses API shows the same quota', { timeout: TIMEOUT }, async () => {
    const { c } = client(`sk-quota-responses-${process.pid}`, 0);
    const { response } = await c.responses.create({ model: 'mock-chat', input: 'hello' }).withResponse();
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '1');
    assert.match(response.headers.get('x-ratelimit-reset-requests'), /^\d+(\.\d+)?(ms|s)$/);
  });
});
