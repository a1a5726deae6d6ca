// The OpenAI Agents SDK for JS (@openai/agents) with its Chat Completions model against
// mockgateway: one agent turn with a function tool, streamed and not — the model calls the
// tool, the SDK runs it and sends the result back, the model answers.
//
// Run:  npm ci && MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test agents.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';

const BASE_URL = process.env.MOCKGATEWAY_BASE_URL;
if (!BASE_URL) throw new Error('MOCKGATEWAY_BASE_URL is not set (e.g. http://127.0.0.1:8080/v1)');
const API_KEY = process.env.MOCKGATEWAY_API_KEY || 'dummy';
const TIMEOUT = 30_000;

// Traces would go to OpenAI's platform: nothing leaves the machine.
setTracingDisabled(true);

function agent(calls) {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The current weather in a city.',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `It is sunny in ${city}.`;
    },
  });
  const client = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
  return new Agent({
    name: 'Weather agent',
    instructions: 'Answer questions about the weather with the tool.',
    model: new OpenAIChatCompletionsModel(client, 'mock-tools'),
    tools: [getWeather],
  });
}

describe('@openai/agents with OpenAIChatCompletionsModel', () => {
  test('one turn with a tool', { timeout: TIMEOUT }, async () => {
    const calls = [];
    const result = await run(agent(calls), 'What is the weather in Paris?');
    assert.equal(calls.length, 1, 'the tool ran once');
    assert.equal(typeof calls[0], 'string');
    assert.ok(result.finalOutput.startsWith('Based on the tool result,'), result.finalOutput);
    const kinds = result.newItems.map((i) => i.type);
    assert.deepEqual(kinds, ['tool_call_item', 'tool_call_output_item', 'message_output_item']);
  });

  test('one turn with a tool, streamed', { timeout: TIMEOUT }, async () => {
    const calls = [];
    const result = await run(agent(calls), 'What is the weather in Paris?', { stream: true });
    let deltas = '';
    for await (const event of result) {
      if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') deltas += event.data.delta;
    }
    await result.completed;
    assert.equal(calls.length, 1, 'the tool ran once');
    assert.ok(result.finalOutput.startsWith('Based on the tool result,'), result.finalOutput);
    assert.equal(deltas, result.finalOutput, 'the streamed text is the final output');
  });
});
