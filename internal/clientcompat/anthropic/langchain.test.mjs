// LangChain JS's ChatAnthropic (@langchain/anthropic with @langchain/core) against mockgateway's
// Messages dialect: invoke, stream, and the bindTools round trip as LangChain documents it.
//
// Run:  npm ci && MOCKGATEWAY_URL=http://127.0.0.1:8080 node --test langchain.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';

import { BASE_URL, TIMEOUT } from './env.mjs';

const chat = (model, extra = {}) => new ChatAnthropic({ model, apiKey: 'dummy', anthropicApiUrl: BASE_URL, maxRetries: 0, ...extra });

const getWeather = tool(async ({ city }) => `Sunny in ${city}, 21 C`, {
  name: 'get_weather',
  description: 'Weather in a city.',
  schema: z.object({ city: z.string() }),
});

describe('@langchain/anthropic', () => {
  test('invoke', { timeout: TIMEOUT }, async () => {
    const ai = await chat('mock-echo').invoke([new SystemMessage('Be brief.'), new HumanMessage('Say hello to the world')]);
    assert.equal(ai.content, 'echo: Say hello to the world');
    assert.equal(ai.response_metadata.stop_reason, 'end_turn');
    assert.equal(ai.usage_metadata.output_tokens, 6);
  });

  test('stream gives invoke\'s text', { timeout: TIMEOUT }, async () => {
    const model = chat('mock-chat', { maxTokens: 12 });
    const whole = await model.invoke('Tell me a story');
    let text = '';
    for await (const chunk of await model.stream('Tell me a story')) text += typeof chunk.content === 'string' ? chunk.content : chunk.content.map((c) => c.text ?? '').join('');
    assert.equal(text, whole.content);
  });

  test('bindTools round trip', { timeout: TIMEOUT }, async () => {
    const model = chat('mock-tools').bindTools([getWeather]);
    const messages = [new HumanMessage("What's the weather in Paris?")];
    const ai = await model.invoke(messages);
    assert.equal(ai.tool_calls.length, 1);
    assert.equal(ai.tool_calls[0].name, 'get_weather');
    assert.match(ai.tool_calls[0].id, /^toolu_/);
    messages.push(ai, await getWeather.invoke(ai.tool_calls[0]));
    const answer = await model.invoke(messages);
    assert.equal(answer.tool_calls.length, 0);
    assert.match(typeof answer.content === 'string' ? answer.content : answer.content[0].text, /^Based on the tool result/);
  });

  test('bindTools streamed', { timeout: TIMEOUT }, async () => {
    const model = chat('mock-tools').bindTools([getWeather]);
    let whole;
    for await (const chunk of await model.stream('Weather in Rome?')) whole = whole ? whole.concat(chunk) : chunk;
    assert.equal(whole.tool_calls.length, 1);
    assert.equal(typeof whole.tool_calls[0].args.city, 'string');
  });
});
