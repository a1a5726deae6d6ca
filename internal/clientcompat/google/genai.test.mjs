// @google/genai, Google's Gen AI SDK for JavaScript, unmodified and on its defaults (the Gemini
// API, version v1), against the service's Gemini dialect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { GoogleGenAI, ApiError, FunctionCallingConfigMode } from '@google/genai';
import { BASE_URL, TIMEOUT } from './env.mjs';

const ai = new GoogleGenAI({ apiKey: 'dummy', httpOptions: { baseUrl: BASE_URL } });

const weather = {
  functionDeclarations: [{
    name: 'get_weather',
    description: 'The weather in a city',
    parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  }],
};

test('generateContent and countTokens agree', { timeout: TIMEOUT }, async () => {
  const r = await ai.models.generateContent({ model: 'mock-echo', contents: 'Say hello' });
  assert.equal(r.text, 'echo: Say hello');
  assert.equal(r.candidates[0].finishReason, 'STOP');
  assert.equal(r.modelVersion, 'mock-echo');
  const u = r.usageMetadata;
  assert.equal(u.totalTokenCount, u.promptTokenCount + u.candidatesTokenCount);
  const c = await ai.models.countTokens({ model: 'mock-echo', contents: 'Say hello' });
  assert.equal(c.totalTokens, u.promptTokenCount);
});

test('generateContentStream', { timeout: TIMEOUT }, async () => {
  let text = '';
  let last;
  for await (const chunk of await ai.models.generateContentStream({ model: 'mock-chat', contents: 'hello', config: { maxOutputTokens: 10 } })) {
    text += chunk.text ?? '';
    last = chunk;
  }
  assert.ok(text.length > 0);
  assert.equal(last.candidates[0].finishReason, 'MAX_TOKENS');
  assert.equal(last.usageMetadata.candidatesTokenCount, 10);
});

test('models: list (paged) and get', { timeout: TIMEOUT }, async () => {
  const names = [];
  const pager = await ai.models.list({ config: { pageSize: 2 } });
  for await (const m of pager) names.push(m.name);
  assert.ok(names.includes('models/mock-tools'), names.join(','));
  assert.ok(names.length > 2);
  const m = await ai.models.get({ model: 'mock-reasoning' });
  assert.equal(m.name, 'models/mock-reasoning');
});

test('function calling round trip', { timeout: TIMEOUT }, async () => {
  const contents = [{ role: 'user', parts: [{ text: 'Weather in Oslo?' }] }];
  const config = { tools: [weather], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } } };
  const r = await ai.models.generateContent({ model: 'mock-tools', contents, config });
  const calls = r.functionCalls;
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, 'get_weather');
  assert.equal(typeof calls[0].args.city, 'string');
  contents.push(r.candidates[0].content, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 3 } } }] });
  const next = await ai.models.generateContent({ model: 'mock-tools', contents, config });
  assert.match(next.text, /^Based on the tool result/);
});

test('a chat with a streamed turn', { timeout: TIMEOUT }, async () => {
  const chat = ai.chats.create({ model: 'mock-echo' });
  const first = await chat.sendMessage({ message: 'first' });
  assert.equal(first.text, 'echo: first');
  let text = '';
  for await (const chunk of await chat.sendMessageStream({ message: 'second' })) text += chunk.text ?? '';
  assert.equal(text, 'echo: second');
  const history = chat.getHistory(true);
  assert.equal(history.filter((c) => c.role === 'user').length, 2);
  assert.equal(history.filter((c) => c.role === 'model').map((c) => c.parts.map((p) => p.text).join('')).join(''), 'echo: firstecho: second');
});

test('responseJsonSchema', { timeout: TIMEOUT }, async () => {
  const r = await ai.models.generateContent({
    model: 'mock-chat', contents: 'a city',
    config: { responseMimeType: 'application/json', responseJsonSchema: { type: 'object', properties: { city: { type: 'string' }, people: { type: 'integer' } }, required: ['city', 'people'] } },
  });
  const v = JSON.parse(r.text);
  assert.equal(typeof v.city, 'string');
  assert.equal(Number.isInteger(v.people), true);
});

test('thinking: thoughts, the signature sent back, a budget of 0', { timeout: TIMEOUT }, async () => {
  const contents = [{ role: 'user', parts: [{ text: 'Weather in Oslo?' }] }];
  const config = { tools: [weather], thinkingConfig: { includeThoughts: true } };
  const r = await ai.models.generateContent({ model: 'mock-reasoning', contents, config });
  const parts = r.candidates[0].content.parts;
  assert.equal(parts[0].thought, true);
  assert.ok(parts[1].functionCall);
  assert.match(parts[1].thoughtSignature, /^[A-Za-z0-9+/]+=*$/);
  assert.ok(r.usageMetadata.thoughtsTokenCount > 0);
  contents.push(r.candidates[0].content, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 3 } } }] });
  let text = '';
  for await (const chunk of await ai.models.generateContentStream({ model: 'mock-reasoning', contents, config })) text += chunk.text ?? '';
  assert.match(text, /Based on the tool result/);
  const off = await ai.models.generateContent({ model: 'mock-reasoning', contents: 'hi', config: { thinkingConfig: { thinkingBudget: 0 } } });
  assert.equal(off.usageMetadata.thoughtsTokenCount, undefined);
});

test('mock-flaky: retryOptions retries the 503', { timeout: TIMEOUT }, async () => {
  const contents = 'flaky ' + randomUUID();
  await assert.rejects(ai.models.generateContent({ model: 'mock-flaky', contents: contents + ' once' }), (e) => e instanceof ApiError && e.status === 503);
  const retrying = new GoogleGenAI({ apiKey: 'dummy', httpOptions: { baseUrl: BASE_URL, retryOptions: { attempts: 3, initialDelay: 0.05, maxDelay: 0.2 } } });
  const r = await retrying.models.generateContent({ model: 'mock-flaky', contents });
  assert.ok(r.text.length > 0);
});

test('ApiError on 404 and 429', { timeout: TIMEOUT }, async () => {
  await assert.rejects(ai.models.generateContent({ model: 'gemini-9', contents: 'hi' }), (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 404);
    assert.match(e.message, /NOT_FOUND/);
    return true;
  });
  await assert.rejects(ai.models.generateContent({ model: 'mock-chat', contents: 'hi', config: { httpOptions: { headers: { 'x-mock-fault': 'rate_limit;retry_after=2s' } } } }), (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 429);
    assert.match(e.message, /RESOURCE_EXHAUSTED/);
    assert.match(e.message, /RetryInfo/);
    return true;
  });
});
