// The Vercel AI SDK's Anthropic provider (@ai-sdk/anthropic with ai) against mockgateway's
// Messages dialect: generateText, streamText, and a tool loop with execute.
//
// Run:  npm ci && MOCKGATEWAY_URL=http://127.0.0.1:8080 node --test aisdk.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';

import { BASE_URL, TIMEOUT, WEATHER_SCHEMA } from './env.mjs';

const anthropic = createAnthropic({ baseURL: BASE_URL + '/v1', apiKey: 'dummy' });

describe('@ai-sdk/anthropic', () => {
  test('generateText', { timeout: TIMEOUT }, async () => {
    const r = await generateText({ model: anthropic('mock-echo'), system: 'Be brief.', prompt: 'Say hello to the world', maxRetries: 0 });
    assert.equal(r.text, 'echo: Say hello to the world');
    assert.equal(r.finishReason, 'stop');
    assert.equal(r.usage.outputTokens, 6);
    assert.ok(r.usage.inputTokens > 0);
  });

  test('streamText gives generateText\'s text', { timeout: TIMEOUT }, async () => {
    const args = { model: anthropic('mock-chat'), prompt: 'Tell me a story', maxOutputTokens: 12, maxRetries: 0 };
    const whole = await generateText(args);
    const s = streamText(args);
    let text = '';
    for await (const delta of s.textStream) text += delta;
    assert.equal(text, whole.text);
    assert.equal(await s.finishReason, 'length');
    assert.equal((await s.usage).outputTokens, 12);
  });

  test('a tool loop: the call, execute, the answer', { timeout: TIMEOUT }, async () => {
    const calls = [];
    const r = await generateText({
      model: anthropic('mock-tools'),
      prompt: "What's the weather in Paris?",
      tools: {
        get_weather: tool({
          description: 'Weather in a city.',
          inputSchema: jsonSchema(WEATHER_SCHEMA),
          execute: async (input) => { calls.push(input); return 'Sunny, 21 C'; },
        }),
      },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    assert.equal(calls.length, 1);
    assert.equal(typeof calls[0].city, 'string');
    assert.equal(r.steps.length, 2);
    assert.equal(r.steps[0].finishReason, 'tool-calls');
    assert.match(r.text, /^Based on the tool result/);
  });

  test('a streamed tool loop', { timeout: TIMEOUT }, async () => {
    const s = streamText({
      model: anthropic('mock-tools'),
      prompt: 'Weather?',
      tools: { get_weather: tool({ inputSchema: jsonSchema(WEATHER_SCHEMA), execute: async () => 'Rain' }) },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    let text = '';
    for await (const delta of s.textStream) text += delta;
    assert.match(text, /^Based on the tool result/);
    assert.equal((await s.steps).length, 2);
  });
});
