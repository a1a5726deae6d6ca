// Extended thinking with the official Anthropic Node SDK (@anthropic-ai/sdk) on mock-reasoning:
// a thinking tool loop — the first answer's thinking block and tool_use passed back unchanged,
// the second turn streamed to finalMessage — then the mistakes Anthropic punishes, punished
// alike (the thinking block dropped, its signature forged), and display: omitted streamed.
//
// Run:  npm ci && MOCKGATEWAY_URL=http://127.0.0.1:8080 node --test thinking.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';

import { BASE_URL, TIMEOUT, WEATHER_SCHEMA } from './env.mjs';

const client = new Anthropic({ baseURL: BASE_URL, apiKey: 'dummy', maxRetries: 0 });

const tools = [{ name: 'get_weather', description: 'Weather in a city.', input_schema: WEATHER_SCHEMA }];
const thinking = { type: 'enabled', budget_tokens: 1024 };
const question = { role: 'user', content: "What's the weather in Paris?" };

// firstTurn is the tool loop's first answer and the messages that send it back with the result.
async function firstTurn() {
  const first = await client.messages.create({ model: 'mock-reasoning', max_tokens: 4096, thinking, tools, messages: [question] });
  assert.equal(first.stop_reason, 'tool_use');
  assert.deepEqual(first.content.map((b) => b.type), ['thinking', 'tool_use']);
  const call = first.content[1];
  const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 21 C' }] };
  return { first, result };
}

describe('@anthropic-ai/sdk thinking on mock-reasoning', () => {
  test('a thinking tool loop, the block passed back unchanged', { timeout: TIMEOUT }, async () => {
    const { first, result } = await firstTurn();
    const [block] = first.content;
    assert.ok(block.thinking.length > 0);
    assert.ok(block.signature.length > 0);
    assert.ok(first.usage.output_tokens > 512, 'the thinking tokens count in output_tokens');
    const final = await client.messages.stream({
      model: 'mock-reasoning', max_tokens: 4096, thinking, tools,
      messages: [question, { role: 'assistant', content: first.content }, result],
    }).finalMessage();
    assert.equal(final.stop_reason, 'end_turn');
    assert.deepEqual(final.content.map((b) => b.type), ['thinking', 'text']);
    assert.ok(final.content[0].signature.length > 0);
    assert.match(final.content[1].text, /^Based on the tool result/);
  });

  test('the thinking block dropped is refused', { timeout: TIMEOUT }, async () => {
    const { first, result } = await firstTurn();
    await assert.rejects(
      client.messages.create({
        model: 'mock-reasoning', max_tokens: 4096, thinking, tools,
        messages: [question, { role: 'assistant', content: first.content.slice(1) }, result],
      }),
      (err) => err instanceof BadRequestError && err.status === 400 &&
        err.message.includes('messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.'),
    );
  });

  test('a forged signature is refused', { timeout: TIMEOUT }, async () => {
    const { first, result } = await firstTurn();
    const forged = [{ ...first.content[0], signature: 'EqQBCkgIARABGAIiQGJ5' }, first.content[1]];
    await assert.rejects(
      client.messages.create({
        model: 'mock-reasoning', max_tokens: 4096, thinking, tools,
        messages: [question, { role: 'assistant', content: forged }, result],
      }),
      (err) => err instanceof BadRequestError && err.message.includes('messages.1.content.0: Invalid `signature` in `thinking` block'),
    );
  });

  test('display: omitted streams an empty thinking with its signature', { timeout: TIMEOUT }, async () => {
    const stream = client.messages.stream({
      model: 'mock-reasoning', max_tokens: 4096, thinking: { type: 'adaptive', display: 'omitted' },
      messages: [{ role: 'user', content: 'Plan a trip' }],
    });
    let signature = '';
    stream.on('signature', (s) => { signature = s; });
    const final = await stream.finalMessage();
    assert.equal(final.content[0].type, 'thinking');
    assert.equal(final.content[0].thinking, '');
    assert.ok(signature.length > 0);
    assert.equal(final.content[0].signature, signature);
  });
});
