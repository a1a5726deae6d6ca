// Reasoning models against mockgateway with the Vercel AI SDK (`ai` 6, `@ai-sdk/openai` 3),
// unmodified: mock-reasoning is no OpenAI model id the SDK knows, so forceReasoning tells it to
// treat the model as one, as its documentation says for custom reasoning models.
//   - Responses API, store: false (the SDK then asks for reasoning.encrypted_content itself),
//     reasoningSummary: a tool loop whose second step sends the first step's reasoning item
//     back with its encrypted content, which the mock verifies; a forged item is refused with
//     OpenAI's invalid_encrypted_content; streamText's reasoning deltas are the summary.
//   - Chat Completions: reasoningEffort sets the reasoning tokens the usage reports; the SDK
//     sends max_completion_tokens, never the max_tokens a reasoning model refuses.
//
// Run:  npm ci && MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test reasoning.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const BASE_URL = process.env.MOCKGATEWAY_BASE_URL;
if (!BASE_URL) throw new Error('MOCKGATEWAY_BASE_URL is not set (e.g. http://127.0.0.1:8080/v1)');
const API_KEY = process.env.MOCKGATEWAY_API_KEY || 'dummy';

const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
const reasoning = { openai: { forceReasoning: true, reasoningEffort: 'low', reasoningSummary: 'auto', store: false } };
const weather = tool({
  description: 'Get the current weather in a city.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, temperature: 21 }),
});

function reasoningItems(body) {
  const input = typeof body === 'string' ? JSON.parse(body).input : body.input;
  return input.filter((it) => it.type === 'reasoning');
}

describe('AI SDK, Responses API, mock-reasoning', () => {
  test('a tool loop sends the reasoning item back, encrypted content and all', async () => {
    const result = await generateText({
      model: provider('mock-reasoning'),
      prompt: 'What is the weather in Lyon?',
      tools: { weather },
      stopWhen: stepCountIs(3),
      providerOptions: reasoning,
      maxRetries: 0,
    });
    assert.equal(result.steps.length, 2, 'a tool call, then the answer');
    const [first, second] = result.steps;
    assert.equal(first.finishReason, 'tool-calls');
    assert.ok(first.reasoningText && first.reasoningText.length > 0, 'the first step has its summary');
    const firstBody = first.request.body;
    assert.deepEqual(firstBody.include, ['reasoning.encrypted_content']);
    assert.equal(firstBody.reasoning.summary, 'auto');
    const sentBack = reasoningItems(second.request.body);
    assert.equal(sentBack.length, 1, 'the second step carries the first step\'s reasoning item');
    assert.ok(sentBack[0].encrypted_content.length > 0);
    assert.ok(sentBack[0].id.startsWith('rs_'));
    assert.ok(result.text.length > 0);
    assert.equal(first.usage.outputTokenDetails.reasoningTokens, 64);
  });

  test('a forged reasoning item is 400 invalid_encrypted_content', async () => {
    await assert.rejects(
      generateText({
        model: provider('mock-reasoning'),
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [
            { type: 'reasoning', text: '', providerOptions: { openai: { itemId: 'rs_forged', reasoningEncryptedContent: 'gAAAAABforged==' } } },
            { type: 'text', text: 'Hello.' },
          ] },
          { role: 'user', content: 'And now?' },
        ],
        providerOptions: reasoning,
        maxRetries: 0,
      }),
      (err) => {
        assert.ok(APICallError.isInstance(err), String(err));
        assert.equal(err.statusCode, 400);
        const body = JSON.parse(err.responseBody);
        assert.equal(body.error.code, 'invalid_encrypted_content');
        assert.equal(body.error.param, null);
        return true;
      },
    );
  });

  test('streamText streams the summary as reasoning deltas', async () => {
    const result = streamText({ model: provider('mock-reasoning'), prompt: 'Plan a weekend', providerOptions: reasoning, maxRetries: 0 });
    let summary = '';
    let text = '';
    for await (const part of result.fullStream) {
      if (part.type === 'reasoning-delta') summary += part.text;
      if (part.type === 'text-delta') {
        assert.ok(summary.length > 0, 'the summary comes before the text');
        text += part.text;
      }
      if (part.type === 'error') throw part.error;
    }
    assert.ok(summary.startsWith('**'), summary);
    assert.equal(await result.reasoningText, summary);
    assert.equal(await result.text, text);
    assert.equal((await result.usage).outputTokenDetails.reasoningTokens, 64);
  });
});

describe('AI SDK, Chat Completions, mock-reasoning', () => {
  test('reasoningEffort sets the reasoning tokens; the budget is max_completion_tokens', async () => {
    const result = await generateText({
      model: provider.chat('mock-reasoning'),
      prompt: 'Plan a weekend',
      maxOutputTokens: 1000,
      providerOptions: { openai: { forceReasoning: true, reasoningEffort: 'high' } },
      maxRetries: 0,
    });
    const body = result.request.body;
    const sent = typeof body === 'string' ? JSON.parse(body) : body;
    assert.equal(sent.max_completion_tokens, 1000);
    assert.equal(sent.max_tokens, undefined);
    assert.equal(sent.reasoning_effort, 'high');
    assert.equal(result.usage.outputTokenDetails.reasoningTokens, 512);
    assert.ok(result.usage.outputTokens > 512);
    assert.ok(result.text.length > 0);
  });
});
