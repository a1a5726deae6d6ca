// The official Anthropic Node SDK (@anthropic-ai/sdk) against mockgateway's Messages dialect:
// create, stream → finalMessage, a tool loop, countTokens, typed errors, retries on mock-flaky.
//
// Run:  npm ci && MOCKGATEWAY_URL=http://127.0.0.1:8080 node --test sdk.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import Anthropic, { NotFoundError, BadRequestError, RateLimitError, OverloadedError } from '@anthropic-ai/sdk';

import { BASE_URL, TIMEOUT, WEATHER_SCHEMA } from './env.mjs';

const client = new Anthropic({ baseURL: BASE_URL, apiKey: 'dummy', maxRetries: 0 });

describe('@anthropic-ai/sdk', () => {
  test('messages.create', { timeout: TIMEOUT }, async () => {
    const m = await client.messages.create({
      model: 'mock-echo', max_tokens: 1024, system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello to the world' }],
    });
    assert.equal(m.type, 'message');
    assert.match(m.id, /^msg_/);
    assert.deepEqual(m.content, [{ type: 'text', text: 'echo: Say hello to the world' }]);
    assert.equal(m.stop_reason, 'end_turn');
    assert.equal(m.stop_sequence, null);
    assert.ok(m.usage.input_tokens > 0);
    assert.equal(m.usage.output_tokens, 6);
  });

  test('messages.stream → finalMessage equals create', { timeout: TIMEOUT }, async () => {
    const params = { model: 'mock-chat', max_tokens: 10, messages: [{ role: 'user', content: 'Tell me a story' }] };
    const whole = await client.messages.create(params);
    const stream = client.messages.stream(params);
    let text = '';
    stream.on('text', (delta) => { text += delta; });
    const final = await stream.finalMessage();
    assert.equal(final.content[0].text, whole.content[0].text);
    assert.equal(text, whole.content[0].text);
    assert.equal(final.stop_reason, 'max_tokens');
    assert.equal(final.usage.output_tokens, 10);
  });

  test('a tool loop: tool_use, then the answer after tool_result', { timeout: TIMEOUT }, async () => {
    const tools = [{ name: 'get_weather', description: 'Weather in a city.', input_schema: WEATHER_SCHEMA }];
    const messages = [{ role: 'user', content: "What's the weather in Paris?" }];
    const first = await client.messages.create({ model: 'mock-tools', max_tokens: 1024, tools, messages });
    assert.equal(first.stop_reason, 'tool_use');
    const call = first.content.find((b) => b.type === 'tool_use');
    assert.match(call.id, /^toolu_/);
    assert.equal(call.name, 'get_weather');
    assert.equal(typeof call.input.city, 'string');
    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 21 C' }] });
    // The second turn streams, as agents do.
    const final = await client.messages.stream({ model: 'mock-tools', max_tokens: 1024, tools, messages }).finalMessage();
    assert.equal(final.stop_reason, 'end_turn');
    assert.match(final.content[0].text, /^Based on the tool result/);
  });

  test('a streamed tool_use accumulates its input', { timeout: TIMEOUT }, async () => {
    const final = await client.messages.stream({
      model: 'mock-tools', max_tokens: 1024, messages: [{ role: 'user', content: 'Weather?' }],
      tools: [{ name: 'get_weather', input_schema: WEATHER_SCHEMA }], tool_choice: { type: 'tool', name: 'get_weather' },
    }).finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    assert.equal(typeof final.content[0].input.city, 'string');
  });

  test('countTokens agrees with usage', { timeout: TIMEOUT }, async () => {
    const body = { model: 'mock-chat', system: 'You are terse.', messages: [{ role: 'user', content: 'How many tokens?' }] };
    const { input_tokens } = await client.messages.countTokens(body);
    const m = await client.messages.create({ ...body, max_tokens: 4 });
    assert.ok(input_tokens > 0);
    assert.equal(input_tokens, m.usage.input_tokens);
  });

  test('stop_sequences cut and are named', { timeout: TIMEOUT }, async () => {
    const m = await client.messages.create({
      model: 'mock-echo', max_tokens: 64, stop_sequences: ['world'],
      messages: [{ role: 'user', content: 'Say hello to the world' }],
    });
    assert.equal(m.content[0].text, 'echo: Say hello to the ');
    assert.equal(m.stop_reason, 'stop_sequence');
    assert.equal(m.stop_sequence, 'world');
  });

  test('models.list in Anthropic\'s shape', { timeout: TIMEOUT }, async () => {
    const ids = [];
    for await (const m of client.models.list()) {
      assert.equal(m.type, 'model');
      ids.push(m.id);
    }
    assert.ok(ids.includes('mock-tools'));
  });

  test('typed errors', { timeout: TIMEOUT }, async () => {
    await assert.rejects(
      client.messages.create({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      (e) => e instanceof NotFoundError && e.status === 404 && e.type === 'not_found_error' && /^req_/.test(e.requestID),
    );
    await assert.rejects(
      client.messages.create({ model: 'mock-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], temperature: 2 }),
      (e) => e instanceof BadRequestError && e.error?.error?.type === 'invalid_request_error',
    );
    await assert.rejects(
      client.messages.create({ model: 'mock-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'x-mock-fault': 'rate_limit' } }),
      (e) => e instanceof RateLimitError && e.headers.get('retry-after') !== null,
    );
    await assert.rejects(
      client.messages.create({ model: 'mock-flaky', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      (e) => e instanceof OverloadedError && e.status === 529,
    );
  });

  test('retries mock-flaky\'s 529 and succeeds', { timeout: TIMEOUT }, async () => {
    const retrying = new Anthropic({ baseURL: BASE_URL, apiKey: 'dummy', maxRetries: 2 });
    const { data, response } = await retrying.messages
      .create({ model: 'mock-flaky', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(data.stop_reason, 'max_tokens');
    assert.equal(response.headers.get('request-id'), response.headers.get('x-request-id'));
  });
});
