// LangChain JS (@langchain/openai ChatOpenAI, Chat Completions mode) against mockgateway, in
// its documented patterns: invoke, stream, bindTools with the tool round trip as the docs write
// it (tool.invoke(aiMessage.tool_calls[0]) → a ToolMessage with `name`), withStructuredOutput,
// and recovery by LangChain's own retries from a fault that fails the first two attempts.
//
// Run:  npm ci && MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test langchain.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';

const BASE_URL = process.env.MOCKGATEWAY_BASE_URL;
if (!BASE_URL) throw new Error('MOCKGATEWAY_BASE_URL is not set (e.g. http://127.0.0.1:8080/v1)');
const API_KEY = process.env.MOCKGATEWAY_API_KEY || 'dummy';
const TIMEOUT = 30_000;

// chat builds a ChatOpenAI as LangChain's docs do for an OpenAI-compatible server.
function chat(model, extra = {}) {
  const { headers, ...rest } = extra;
  return new ChatOpenAI({
    model,
    apiKey: API_KEY,
    maxRetries: 0,
    configuration: { baseURL: BASE_URL, defaultHeaders: headers },
    ...rest,
  });
}

const getWeather = tool(async ({ city }) => `It is sunny in ${city}.`, {
  name: 'get_weather',
  description: 'The current weather in a city.',
  schema: z.object({ city: z.string().describe('The city') }),
});

describe('@langchain/openai ChatOpenAI', () => {
  test('invoke', { timeout: TIMEOUT }, async () => {
    const ai = await chat('mock-echo').invoke('hello from langchain');
    assert.ok(ai instanceof AIMessage);
    assert.equal(ai.content, 'echo: hello from langchain');
    assert.ok(ai.usage_metadata.input_tokens > 0);
    assert.equal(ai.usage_metadata.output_tokens, 4);
  });

  test('stream', { timeout: TIMEOUT }, async () => {
    const llm = chat('mock-chat', { streamUsage: true });
    let text = '';
    let chunks = 0;
    let usage;
    for await (const chunk of await llm.stream('tell me something')) {
      text += chunk.content;
      chunks++;
      if (chunk.usage_metadata) usage = chunk.usage_metadata;
    }
    const whole = await llm.invoke('tell me something');
    assert.ok(chunks > 2, `only ${chunks} chunks`);
    assert.equal(text, whole.content, 'the stream and the JSON answer differ');
    assert.ok(usage && usage.output_tokens > 0, 'no usage on the stream');
  });

  // Streamed, the answer is the concatenation of the chunks, as LangChain's docs build it. (Not
  // `streaming: true` with invoke: LangChain then estimates token counts with tiktoken ranks it
  // fetches from the network, which offline retries for longer than this test's timeout.)
  async function streamed(llm, messages) {
    let whole;
    for await (const chunk of await llm.stream(messages)) whole = whole ? whole.concat(chunk) : chunk;
    return whole;
  }

  for (const streaming of [false, true]) {
    test(`bindTools and the tool round trip (streamed: ${streaming})`, { timeout: TIMEOUT }, async () => {
      const llm = chat('mock-tools').bindTools([getWeather]);
      const send = (messages) => (streaming ? streamed(llm, messages) : llm.invoke(messages));
      const messages = [new HumanMessage('What is the weather in Paris?')];
      const ai = await send(messages);
      assert.equal(ai.tool_calls.length, 1);
      assert.equal(ai.tool_calls[0].name, 'get_weather');
      assert.equal(typeof ai.tool_calls[0].args.city, 'string');
      // The documented way: invoking the tool with the tool call gives a ToolMessage (with name).
      const toolMessage = await getWeather.invoke(ai.tool_calls[0]);
      assert.ok(toolMessage instanceof ToolMessage);
      assert.equal(toolMessage.name, 'get_weather');
      const final = await send([...messages, ai, toolMessage]);
      assert.equal(final.tool_calls.length, 0);
      assert.ok(typeof final.content === 'string' && final.content.startsWith('Based on the tool result,'), final.content);
    });
  }

  const Person = z.object({ name: z.string(), age: z.number().int().min(0).max(150) });
  for (const method of [undefined, 'jsonSchema', 'functionCalling']) {
    test(`withStructuredOutput (method: ${method ?? 'default'})`, { timeout: TIMEOUT }, async () => {
      // functionCalling needs a tool-capable model; the others ask for response_format.
      const llm = chat(method === 'functionCalling' ? 'mock-tools' : 'mock-chat');
      const structured = method ? llm.withStructuredOutput(Person, { method }) : llm.withStructuredOutput(Person);
      const out = await structured.invoke('Invent a person.');
      assert.deepEqual(Object.keys(out).sort(), ['age', 'name']);
      Person.parse(out);
    });
  }

  test('LangChain retries recover from a fault that fails the first two attempts', { timeout: TIMEOUT }, async () => {
    // LangChain JS turns the OpenAI SDK's own retries off and retries itself, sending
    // x-stainless-retry-count: 0 every time; the mock counts such attempts by the request.
    const llm = chat('mock-chat', {
      maxRetries: 2,
      headers: { 'x-mock-fault': 'rate_limit;attempts=2;retry_after=0s' },
    });
    const ai = await llm.invoke('retry me');
    assert.ok(ai.content.length > 0);
    // With one retry fewer than the fault needs, the error reaches the caller.
    const short = chat('mock-chat', {
      maxRetries: 1,
      headers: { 'x-mock-fault': 'rate_limit;attempts=2;retry_after=0s' },
    });
    await assert.rejects(short.invoke('retry me, once'), (err) => err.status === 429 || /429/.test(String(err)));
  });
});
