// @google/genai against a service started with --api-key: the right key answers, a wrong one is
// Google's 400 INVALID_ARGUMENT API_KEY_INVALID, which the SDK throws as an ApiError of that
// status (it cannot be made to send no key at all: it refuses an empty apiKey itself).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI, ApiError } from '@google/genai';
import { TIMEOUT, keyedService } from './env.mjs';

const { url, key } = keyedService();

test('the local key: taken when right, ApiError 400 API_KEY_INVALID when wrong', { timeout: TIMEOUT }, async () => {
  const right = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } });
  const r = await right.models.generateContent({ model: 'mock-echo', contents: 'hi' });
  assert.equal(r.text, 'echo: hi');
  const wrong = new GoogleGenAI({ apiKey: 'not-' + key, httpOptions: { baseUrl: url } });
  const refused = (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 400);
    assert.match(e.message, /API key not valid\. Please pass a valid API key\./);
    assert.match(e.message, /INVALID_ARGUMENT/);
    assert.match(e.message, /API_KEY_INVALID/);
    return true;
  };
  await assert.rejects(wrong.models.generateContent({ model: 'mock-echo', contents: 'hi' }), refused);
  await assert.rejects(wrong.models.generateContentStream({ model: 'mock-echo', contents: 'hi' }), refused);
  await assert.rejects(wrong.models.list(), refused);
});
