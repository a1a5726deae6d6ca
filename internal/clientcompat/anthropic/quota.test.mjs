// The official Anthropic Node SDK against a simulated quota (docs/simulation.md, Quotas and
// load): it obeys x-should-retry — retrying a refusal after retry-after and succeeding, never
// retrying a request too large — and with retries off throws RateLimitError.
//
// Run:  npm ci && MOCKGATEWAY_URL=http://127.0.0.1:8080 node --test quota.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import Anthropic, { RateLimitError } from '@anthropic-ai/sdk';

import { BASE_URL, TIMEOUT } from './env.mjs';

// A client of its own key (its own organization and buckets) on quota, counting its requests.
function client(key, maxRetries, quota) {
  const sent = { n: 0 };
  const c = new Anthropic({
    baseURL: BASE_URL, apiKey: key, maxRetries,
    defaultHeaders: { 'x-mock-quota': quota },
    fetch: (url, init) => { sent.n++; return fetch(url, init); },
  });
  return { c, sent };
}

const ask = { model: 'mock-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] };

describe('@anthropic-ai/sdk and a quota', () => {
  test('x-should-retry: true, its retry waits out retry-after and succeeds', { timeout: TIMEOUT }, async () => {
    const { c, sent } = client(`sk-ant-quota-retry-${process.pid}`, 3, 'rpm=2;window=3s');
    for (const left of ['1', '0']) {
      const { response } = await c.messages.create(ask).withResponse();
      assert.equal(response.headers.get('anthropic-ratelimit-requests-limit'), '2');
      assert.equal(response.headers.get('anthropic-ratelimit-requests-remaining'), left);
      assert.ok(!Number.isNaN(Date.parse(response.headers.get('anthropic-ratelimit-requests-reset'))));
    }
    const start = Date.now();
    const m = await c.messages.create(ask);
    assert.equal(m.type, 'message');
    assert.equal(sent.n, 4, 'the third call was refused once, then retried');
    assert.ok(Date.now() - start >= 1000, 'the retry waited for the bucket');
  });

  test('with retries off: RateLimitError in Anthropic\'s words', { timeout: TIMEOUT }, async () => {
    const { c } = client(`sk-ant-quota-off-${process.pid}`, 0, 'rpm=1;window=3s');
    await c.messages.create(ask);
    await assert.rejects(c.messages.create(ask), (err) => {
      assert.ok(err instanceof RateLimitError);
      assert.equal(err.status, 429);
      assert.equal(err.error.error.type, 'rate_limit_error');
      assert.match(err.error.error.message, /^This request would exceed the rate limit for your organization \([0-9a-f-]{36}\) of 1 requests per minute/);
      assert.equal(err.headers.get('x-should-retry'), 'true');
      assert.ok(Number(err.headers.get('retry-after')) >= 1);
      return true;
    });
  });

  test('x-should-retry: false, a request too large is not retried', { timeout: TIMEOUT }, async () => {
    const { c, sent } = client(`sk-ant-quota-large-${process.pid}`, 3, 'tpm=100');
    await assert.rejects(c.messages.create({ ...ask, max_tokens: 500 }), RateLimitError);
    assert.equal(sent.n, 1, 'no retry');
  });
});
