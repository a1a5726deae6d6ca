// @google/genai against a simulated quota (docs/simulation.md, Quotas and load): without
// retryOptions it does not retry, and its ApiError carries the 429 RESOURCE_EXHAUSTED body with
// its QuotaFailure and "Please retry in"; with retryOptions its own backoff waits the bucket out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI, ApiError } from '@google/genai';
import { BASE_URL, TIMEOUT } from './env.mjs';

// A client of its own key (its own project and buckets) on two requests per three seconds,
// counting the requests it sends.
function client(key, retryOptions) {
  const sent = { n: 0 };
  const ai = new GoogleGenAI({
    apiKey: key,
    httpOptions: {
      baseUrl: BASE_URL, retryOptions,
      headers: { 'x-mock-quota': 'rpm=2;window=3s' },
      fetch: (url, init) => { sent.n++; return fetch(url, init); },
    },
  });
  return { ai, sent };
}

const ask = { model: 'mock-chat', contents: 'hello' };

test('without retryOptions: one 429 RESOURCE_EXHAUSTED in Google\'s words', { timeout: TIMEOUT }, async () => {
  const { ai, sent } = client(`quota-plain-${process.pid}`, undefined);
  await ai.models.generateContent(ask);
  await ai.models.generateContent(ask);
  await assert.rejects(ai.models.generateContent(ask), (err) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 429);
    assert.match(err.message, /RESOURCE_EXHAUSTED/);
    assert.match(err.message, /GenerateRequestsPerMinutePerProjectPerModel/);
    assert.match(err.message, /Please retry in \d+(\.\d+)?s\./);
    return true;
  });
  assert.equal(sent.n, 3, 'no retry');
});

test('with retryOptions: its backoff waits the bucket out', { timeout: TIMEOUT }, async () => {
  const { ai, sent } = client(`quota-retry-${process.pid}`, { attempts: 5, initialDelay: 1, jitter: 0 });
  await ai.models.generateContent(ask);
  await ai.models.generateContent(ask);
  const r = await ai.models.generateContent(ask);
  assert.ok(r.text.length > 0);
  assert.ok(sent.n >= 4, 'the third call was refused, then retried');
});
