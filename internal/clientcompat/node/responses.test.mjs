// The Responses API (POST /v1/responses) against mockgateway, with real, unmodified clients in
// their documented patterns, each on the first try:
//   - the official `openai` SDK: responses.create (JSON and stream), responses.stream,
//     responses.parse with zodTextFormat, max_output_tokens → incomplete, the stateless
//     function-calling loop (function_call sent back as it came, then function_call_output),
//     json_schema structured output, and the errors of a stateless mock;
//   - the OpenAI Agents SDK (@openai/agents) with its DEFAULT model class (OpenAIResponsesModel,
//     model given as a string, client from setDefaultOpenAIClient): text, tool loop, streamed
//     tool loop, outputType (zod);
//   - LangChain JS ChatOpenAI with useResponsesApi: true: tool round trip, stream;
//   - the AI SDK's default OpenAI model (provider(id) is the Responses API in @ai-sdk/openai 3.x):
//     generateText, a tool loop, streamText, structured output.
// Stream checks: sequence_number runs 0, 1, 2, … without a gap; the deltas concatenate to the
// final text; a text stream has exactly usage.output_tokens deltas.
//
// Run:  npm ci && MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test responses.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI, { BadRequestError } from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import * as agents from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool as lcTool } from '@langchain/core/tools';
import { createOpenAI } from '@ai-sdk/openai';
import { Output, generateObject, generateText, stepCountIs, streamText, tool as aiTool } from 'ai';
import { z } from 'zod';

const BASE_URL = process.env.MOCKGATEWAY_BASE_URL;
if (!BASE_URL) throw new Error('MOCKGATEWAY_BASE_URL is not set (e.g. http://127.0.0.1:8080/v1)');
const API_KEY = process.env.MOCKGATEWAY_API_KEY || 'dummy';
const TIMEOUT = 30_000;

const client = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, timeout: TIMEOUT });
const strictClient = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, timeout: TIMEOUT, maxRetries: 0 });

// Traces would go to OpenAI's platform: nothing leaves the machine. The Agents SDK's default
// model is the Responses one; it gets its client from setDefaultOpenAIClient.
agents.setTracingDisabled(true);
agents.setDefaultOpenAIClient(new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, timeout: TIMEOUT }));
agents.setOpenAIAPI('responses');

const WEATHER_PARAMETERS = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const WeatherArgs = z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }).strict();
const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather in a city.',
  parameters: WEATHER_PARAMETERS,
  strict: true,
};

const CITY_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    population: { type: 'integer' },
    landmarks: { type: 'array', items: { type: 'string' } },
  },
  required: ['city', 'population', 'landmarks'],
  additionalProperties: false,
};
const City = z.object({ city: z.string(), population: z.number().int(), landmarks: z.array(z.string()) }).strict();

const AFTER_TOOL = /^Based on the tool result,/;

// collect reads an openai-node stream of Responses events into an array.
async function collect(stream) {
  const events = [];
  for await (const ev of stream) events.push(ev);
  return events;
}

// checkEvents asserts what every Responses stream promises: sequence_number 0, 1, 2, … without a
// gap; response.created then response.in_progress first; exactly one terminal event, last
// (response.completed or response.incomplete); every output_item.added has its output_item.done.
// It returns the final response.
function checkEvents(events, terminal = 'response.completed') {
  assert.ok(events.length >= 3, `only ${events.length} events`);
  events.forEach((ev, i) => assert.equal(ev.sequence_number, i, `event ${i} (${ev.type}) has sequence_number ${ev.sequence_number}`));
  assert.equal(events[0].type, 'response.created');
  assert.equal(events[1].type, 'response.in_progress');
  assert.equal(events[0].response.status, 'in_progress');
  const last = events.at(-1);
  assert.equal(last.type, terminal, `the stream ends with ${last.type}`);
  const terminals = events.filter((e) => ['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(e.type));
  assert.equal(terminals.length, 1, `terminal events: ${terminals.map((e) => e.type)}`);
  const ids = new Set(events.map((e) => e.response?.id).filter(Boolean));
  assert.equal(ids.size, 1, 'every response snapshot has the same id');
  const added = events.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index);
  const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.output_index);
  assert.deepEqual(done, added, 'each added output item is done, in order');
  return last.response;
}

// textOf is the concatenated output_text of a response's message items.
function textOf(response) {
  return response.output
    .filter((i) => i.type === 'message')
    .flatMap((i) => i.content)
    .filter((c) => c.type === 'output_text')
    .map((c) => c.text)
    .join('');
}

function checkUsage(usage) {
  assert.ok(usage, 'usage is present');
  assert.ok(usage.input_tokens > 0, `input_tokens ${usage.input_tokens}`);
  assert.ok(usage.output_tokens > 0, `output_tokens ${usage.output_tokens}`);
  assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens);
}

// ---------------------------------------------------------------------------------------------

describe('openai SDK: responses.create', () => {
  test('text', { timeout: TIMEOUT }, async () => {
    const { data: r, response: raw } = await client.responses
      .create({ model: 'mock-chat', instructions: 'You are a helpful assistant.', input: 'Tell me about Paris.' })
      .withResponse();
    assert.ok(raw.headers.get('x-request-id'), 'x-request-id header');
    assert.equal(r.object, 'response');
    assert.match(r.id, /^resp_/);
    assert.equal(r.status, 'completed');
    assert.equal(r.model, 'mock-chat');
    assert.equal(r.incomplete_details, null);
    assert.equal(r.output.length, 1);
    const msg = r.output[0];
    assert.equal(msg.type, 'message');
    assert.equal(msg.role, 'assistant');
    assert.equal(msg.status, 'completed');
    assert.equal(msg.content[0].type, 'output_text');
    assert.ok(r.output_text.length > 0, 'output_text (the SDK helper) is not empty');
    assert.equal(r.output_text, textOf(r));
    checkUsage(r.usage);
  });

  test('stream: sequence numbers, deltas, usage', { timeout: TIMEOUT }, async () => {
    const body = { model: 'mock-chat', input: [{ role: 'user', content: 'Tell me about Paris.' }] };
    const events = await collect(await client.responses.create({ ...body, stream: true }));
    const final = checkEvents(events);
    assert.equal(final.status, 'completed');
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    const text = deltas.map((e) => e.delta).join('');
    assert.ok(text.length > 0);
    assert.equal(text, textOf(final), 'the deltas concatenate to the final output_text');
    const doneText = events.find((e) => e.type === 'response.output_text.done');
    assert.equal(doneText.text, text, 'response.output_text.done carries the whole text');
    const itemDone = events.find((e) => e.type === 'response.output_item.done');
    assert.equal(itemDone.item.content[0].text, text);
    assert.equal(new Set(deltas.map((e) => e.item_id)).size, 1, 'all deltas belong to one item');
    assert.equal(deltas[0].item_id, final.output[0].id);
    checkUsage(final.usage);
    assert.equal(deltas.length, final.usage.output_tokens, 'one delta per output token');
    const order = events.map((e) => e.type).filter((t) => !t.endsWith('.delta'));
    assert.deepEqual(order, [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    // the same request without stream gives the same text
    const whole = await client.responses.create(body);
    assert.equal(whole.output_text, text, 'stream and JSON answers differ');
  });

  test('max_output_tokens: 16 → incomplete', { timeout: TIMEOUT }, async () => {
    const body = { model: 'mock-chat', input: 'Tell me a long story about Paris and its many bridges over the Seine.', max_output_tokens: 16 };
    const r = await client.responses.create(body);
    assert.equal(r.status, 'incomplete');
    assert.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(r.max_output_tokens, 16);
    assert.equal(r.usage.output_tokens, 16);
    assert.ok(r.output_text.length > 0);

    const events = await collect(await client.responses.create({ ...body, stream: true }));
    const final = checkEvents(events, 'response.incomplete');
    assert.equal(final.status, 'incomplete');
    assert.equal(final.incomplete_details?.reason, 'max_output_tokens');
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    assert.equal(deltas.length, 16);
    assert.equal(deltas.map((e) => e.delta).join(''), r.output_text, 'the cut stream and the cut JSON answer differ');
  });

  test('function call and function_call_output round trip', { timeout: TIMEOUT }, async () => {
    const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await client.responses.create({ model: 'mock-tools', input, tools: [WEATHER_TOOL] });
    assert.equal(first.status, 'completed');
    const calls = first.output.filter((i) => i.type === 'function_call');
    assert.equal(calls.length, 1, `output: ${JSON.stringify(first.output)}`);
    const call = calls[0];
    assert.equal(call.name, 'get_weather');
    assert.ok(call.call_id, 'call_id');
    assert.ok(call.id, 'item id');
    const args = WeatherArgs.parse(JSON.parse(call.arguments));
    assert.equal(first.output_text, '', 'no text next to the call');

    // The guide's stateless loop: send the call back as it came, then its output.
    input.push(...first.output);
    input.push({ type: 'function_call_output', call_id: call.call_id, output: JSON.stringify({ city: args.city, temperature: 21 }) });
    const second = await client.responses.create({ model: 'mock-tools', input, tools: [WEATHER_TOOL] });
    assert.equal(second.status, 'completed');
    assert.equal(second.output.filter((i) => i.type === 'function_call').length, 0, 'no second call');
    assert.match(second.output_text, AFTER_TOOL);
    checkUsage(second.usage);
  });

  test('function call, streamed: argument deltas', { timeout: TIMEOUT }, async () => {
    const events = await collect(
      await client.responses.create({
        model: 'mock-tools',
        input: [{ role: 'user', content: 'What is the weather in Paris?' }],
        tools: [WEATHER_TOOL],
        stream: true,
      }),
    );
    const final = checkEvents(events);
    const call = final.output.find((i) => i.type === 'function_call');
    assert.ok(call, `output: ${JSON.stringify(final.output)}`);
    const added = events.find((e) => e.type === 'response.output_item.added');
    assert.equal(added.item.type, 'function_call');
    assert.equal(added.item.call_id, call.call_id);
    assert.equal(added.item.name, 'get_weather');
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    assert.ok(deltas.length > 1, 'arguments come in pieces');
    const joined = deltas.map((e) => e.delta).join('');
    const done = events.find((e) => e.type === 'response.function_call_arguments.done');
    assert.equal(done.arguments, joined);
    assert.equal(call.arguments, joined);
    WeatherArgs.parse(JSON.parse(joined));
    assert.equal(deltas.length, final.usage.output_tokens, 'one argument delta per output token');
  });

  test('json_schema structured output', { timeout: TIMEOUT }, async () => {
    const r = await client.responses.create({
      model: 'mock-chat',
      input: 'Describe Paris as JSON.',
      text: { format: { type: 'json_schema', name: 'city', schema: CITY_SCHEMA, strict: true } },
    });
    assert.equal(r.status, 'completed');
    City.parse(JSON.parse(r.output_text));
    assert.equal(r.text?.format?.type, 'json_schema');
  });

  test('responses.parse with zodTextFormat', { timeout: TIMEOUT }, async () => {
    const r = await client.responses.parse({ model: 'mock-chat', input: 'Describe Paris as JSON.', text: { format: zodTextFormat(City, 'city') } });
    assert.equal(r.status, 'completed');
    assert.ok(r.output_parsed, 'output_parsed');
    City.parse(r.output_parsed);
    assert.deepEqual(r.output_parsed, JSON.parse(r.output_text));
  });

  test('previous_response_id, conversation and hosted tools are refused (stateless mock)', { timeout: TIMEOUT }, async () => {
    const cases = [
      [{ model: 'mock-chat', input: 'And Lyon?', previous_response_id: 'resp_123' }, 'previous_response_id'],
      [{ model: 'mock-chat', input: 'And Lyon?', conversation: 'conv_123' }, 'conversation'],
    ];
    for (const [body, param] of cases) {
      await assert.rejects(strictClient.responses.create(body), (err) => {
        assert.ok(err instanceof BadRequestError, `${param}: ${err}`);
        assert.equal(err.status, 400);
        assert.equal(err.code, 'unsupported_parameter');
        assert.equal(err.param, param);
        assert.ok(err.requestID, 'x-request-id on the error');
        return true;
      });
    }
    await assert.rejects(strictClient.responses.create({ model: 'mock-tools', input: 'Search my files.', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }), (err) => {
      assert.ok(err instanceof BadRequestError, String(err));
      assert.equal(err.code, 'unsupported_parameter');
      assert.match(String(err.param), /^tools/);
      return true;
    });
  });

  test('web_search beside a function tool is accepted and never called (as the Codex CLI offers it)', { timeout: TIMEOUT }, async () => {
    const weather = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
    const r = await strictClient.responses.create({ model: 'mock-tools', input: 'Weather in Paris?', tools: [{ type: 'web_search', search_context_size: 'low' }, weather] });
    assert.deepEqual(r.output.map((it) => [it.type, it.name]), [['function_call', 'get_weather']]);
    assert.deepEqual(r.tools.map((t) => t.type), ['web_search', 'function'], 'the tools echoed where they were sent');
  });
});

describe('openai SDK: responses.stream', () => {
  test('text, with the helper events', { timeout: TIMEOUT }, async () => {
    let deltas = '';
    let count = 0;
    const events = [];
    const stream = client.responses.stream({ model: 'mock-chat', input: 'Tell me about Paris.' });
    stream.on('response.output_text.delta', (e) => {
      deltas += e.delta;
      count++;
    });
    stream.on('event', (e) => events.push(e));
    const final = await stream.finalResponse();
    checkEvents(events);
    assert.equal(final.status, 'completed');
    assert.ok(deltas.length > 0);
    assert.equal(final.output_text, deltas);
    assert.equal(count, final.usage.output_tokens);
  });

  test('max_output_tokens: 16 → incomplete', { timeout: TIMEOUT }, async () => {
    const events = [];
    const stream = client.responses.stream({ model: 'mock-chat', input: 'Tell me a long story about Paris.', max_output_tokens: 16 });
    stream.on('event', (e) => events.push(e));
    const final = await stream.finalResponse();
    checkEvents(events, 'response.incomplete');
    assert.equal(final.status, 'incomplete');
    assert.equal(final.incomplete_details?.reason, 'max_output_tokens');
    assert.equal(final.usage.output_tokens, 16);
  });

  test('tool round trip', { timeout: TIMEOUT }, async () => {
    const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
    // The items as the API sent them (response.output_item.done): finalResponse() returns a
    // ParsedResponse whose function_call items carry an extra parsed_arguments, which the API
    // refuses as input (openai/openai-python#2720) and so does the mock (checked below).
    const items = [];
    const s1 = client.responses.stream({ model: 'mock-tools', input, tools: [WEATHER_TOOL] });
    s1.on('response.output_item.done', (e) => items.push(e.item));
    const first = await s1.finalResponse();
    const call = first.output.find((i) => i.type === 'function_call');
    assert.ok(call, `output: ${JSON.stringify(first.output)}`);
    assert.deepEqual(call.parsed_arguments, JSON.parse(call.arguments), 'the helper parses a strict tool\'s arguments');
    WeatherArgs.parse(JSON.parse(call.arguments));
    assert.equal(items.length, 1);
    assert.equal(items[0].call_id, call.call_id);
    const output = { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' };

    let text = '';
    const s2 = client.responses.stream({ model: 'mock-tools', input: [...input, ...items, output], tools: [WEATHER_TOOL] });
    s2.on('response.output_text.delta', (e) => (text += e.delta));
    const second = await s2.finalResponse();
    assert.match(second.output_text, AFTER_TOOL);
    assert.equal(text, second.output_text);

    await assert.rejects(strictClient.responses.create({ model: 'mock-tools', input: [...input, ...first.output, output], tools: [WEATHER_TOOL] }), (err) => {
      assert.equal(err.status, 400);
      assert.equal(err.code, 'unknown_parameter');
      assert.equal(err.param, 'input[1].parsed_arguments');
      return true;
    });
  });

  test('json_schema with zodTextFormat', { timeout: TIMEOUT }, async () => {
    const final = await client.responses.stream({ model: 'mock-chat', input: 'Describe Paris as JSON.', text: { format: zodTextFormat(City, 'city') } }).finalResponse();
    assert.equal(final.status, 'completed');
    City.parse(final.output_parsed);
  });
});

// ---------------------------------------------------------------------------------------------

function weatherAgent(calls) {
  const getWeather = agents.tool({
    name: 'get_weather',
    description: 'Get the current weather in a city.',
    parameters: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
    execute: async ({ city }) => {
      calls.push(city);
      return `It is sunny in ${city}.`;
    },
  });
  return new agents.Agent({
    name: 'Weather agent',
    instructions: 'Answer questions about the weather with the tool.',
    model: 'mock-tools',
    tools: [getWeather],
  });
}

describe('@openai/agents with the default Responses model', () => {
  test('text', { timeout: TIMEOUT }, async () => {
    const agent = new agents.Agent({ name: 'Assistant', instructions: 'You are a helpful assistant.', model: 'mock-chat' });
    const result = await agents.run(agent, 'Tell me about Paris.');
    assert.equal(typeof result.finalOutput, 'string');
    assert.ok(result.finalOutput.length > 0);
    assert.deepEqual(result.newItems.map((i) => i.type), ['message_output_item']);
    assert.ok(result.rawResponses[0].usage.outputTokens > 0);
  });

  test('tool loop', { timeout: TIMEOUT }, async () => {
    const calls = [];
    const result = await agents.run(weatherAgent(calls), 'What is the weather in Paris?');
    assert.equal(calls.length, 1, 'the tool ran once');
    assert.equal(typeof calls[0], 'string');
    assert.match(result.finalOutput, AFTER_TOOL);
    assert.deepEqual(result.newItems.map((i) => i.type), ['tool_call_item', 'tool_call_output_item', 'message_output_item']);
    assert.equal(result.rawResponses.length, 2);
  });

  test('tool loop, streamed', { timeout: TIMEOUT }, async () => {
    const calls = [];
    const result = await agents.run(weatherAgent(calls), 'What is the weather in Paris?', { stream: true });
    let deltas = '';
    for await (const event of result) {
      if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') deltas += event.data.delta;
    }
    await result.completed;
    assert.equal(result.error ?? null, null);
    assert.equal(calls.length, 1, 'the tool ran once');
    assert.match(result.finalOutput, AFTER_TOOL);
    assert.equal(deltas, result.finalOutput, 'the streamed text is the final output');
  });

  test('outputType (zod)', { timeout: TIMEOUT }, async () => {
    const agent = new agents.Agent({ name: 'City agent', instructions: 'Describe the city.', model: 'mock-chat', outputType: City });
    const result = await agents.run(agent, 'Describe Paris.');
    City.parse(result.finalOutput);
  });
});

// ---------------------------------------------------------------------------------------------

function lc(model, extra = {}) {
  return new ChatOpenAI({ model, apiKey: API_KEY, maxRetries: 0, useResponsesApi: true, configuration: { baseURL: BASE_URL }, ...extra });
}

const lcWeather = lcTool(async ({ city }) => `It is sunny in ${city}.`, {
  name: 'get_weather',
  description: 'Get the current weather in a city.',
  schema: z.object({ city: z.string().describe('The city') }),
});

describe('@langchain/openai ChatOpenAI with useResponsesApi', () => {
  test('tool round trip', { timeout: TIMEOUT }, async () => {
    const llm = lc('mock-tools').bindTools([lcWeather]);
    const human = new HumanMessage('What is the weather in Paris?');
    const ai = await llm.invoke([human]);
    assert.ok(ai instanceof AIMessage);
    assert.equal(ai.tool_calls.length, 1, JSON.stringify(ai));
    assert.equal(ai.tool_calls[0].name, 'get_weather');
    assert.equal(typeof ai.tool_calls[0].args.city, 'string');
    const toolMsg = await lcWeather.invoke(ai.tool_calls[0]);
    assert.ok(toolMsg instanceof ToolMessage);
    const answer = await llm.invoke([human, ai, toolMsg]);
    assert.equal(answer.tool_calls.length, 0);
    assert.match(answer.text, AFTER_TOOL);
    assert.ok(answer.usage_metadata.output_tokens > 0);
  });

  test('stream', { timeout: TIMEOUT }, async () => {
    const llm = lc('mock-chat');
    let text = '';
    let chunks = 0;
    let usage;
    for await (const chunk of await llm.stream('Tell me about Paris.')) {
      text += chunk.text;
      chunks++;
      if (chunk.usage_metadata) usage = chunk.usage_metadata;
    }
    assert.ok(chunks > 2, `only ${chunks} chunks`);
    const whole = await llm.invoke('Tell me about Paris.');
    assert.ok(text.length > 0);
    assert.equal(text, whole.text, 'the stream and the JSON answer differ');
    assert.ok(usage && usage.output_tokens > 0, `usage ${JSON.stringify(usage)}`);
    assert.equal(usage.output_tokens, whole.usage_metadata.output_tokens);
  });
});

// ---------------------------------------------------------------------------------------------

const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });

describe('AI SDK openai(model) (Responses)', () => {
  test('generateText', { timeout: TIMEOUT }, async () => {
    const r = await generateText({ model: provider('mock-chat'), system: 'You are a helpful assistant.', prompt: 'Tell me about Paris.', maxRetries: 0 });
    assert.ok(r.text.length > 0);
    assert.equal(r.finishReason, 'stop');
    assert.ok(r.usage.outputTokens > 0);
    assert.ok(r.response.id.startsWith('resp_'), r.response.id);
  });

  test('generateText with maxOutputTokens: 16 → length', { timeout: TIMEOUT }, async () => {
    const r = await generateText({ model: provider('mock-chat'), prompt: 'Tell me a long story about Paris.', maxOutputTokens: 16, maxRetries: 0 });
    assert.equal(r.finishReason, 'length');
    assert.equal(r.usage.outputTokens, 16);
  });

  test('tool loop (stopWhen: stepCountIs(3))', { timeout: TIMEOUT }, async () => {
    const calls = [];
    const r = await generateText({
      model: provider('mock-tools'),
      prompt: 'What is the weather in Paris?',
      tools: {
        get_weather: aiTool({
          description: 'Get the current weather in a city.',
          inputSchema: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
          execute: async ({ city, unit }) => {
            calls.push(city);
            return { city, unit, temperature: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    assert.equal(calls.length, 1, 'the tool ran once');
    assert.equal(r.steps.length, 2);
    assert.equal(r.steps[0].finishReason, 'tool-calls');
    assert.equal(r.steps[0].toolCalls[0].toolName, 'get_weather');
    assert.equal(r.finishReason, 'stop');
    assert.match(r.text, AFTER_TOOL);
  });

  test('multi-turn with the earlier answer sent back (item_reference)', { timeout: TIMEOUT }, async () => {
    const user = { role: 'user', content: 'Tell me about Paris.' };
    const first = await generateText({ model: provider('mock-chat'), messages: [user], maxRetries: 0 });
    const second = await generateText({
      model: provider('mock-chat'),
      messages: [user, ...first.response.messages, { role: 'user', content: 'And about Lyon?' }],
      maxRetries: 0,
    });
    assert.ok(second.text.length > 0);
    assert.equal(second.finishReason, 'stop');
  });

  test('streamText', { timeout: TIMEOUT }, async () => {
    const r = streamText({ model: provider('mock-chat'), prompt: 'Tell me about Paris.', maxRetries: 0 });
    let text = '';
    let parts = 0;
    for await (const t of r.textStream) {
      text += t;
      parts++;
    }
    assert.ok(parts > 2, `only ${parts} parts`);
    assert.equal(await r.text, text);
    assert.equal(await r.finishReason, 'stop');
    const usage = await r.usage;
    assert.equal(usage.outputTokens, parts, 'one text delta per output token');
    const whole = await generateText({ model: provider('mock-chat'), prompt: 'Tell me about Paris.', maxRetries: 0 });
    assert.equal(whole.text, text, 'streamText and generateText differ');
  });

  test('structured output: generateObject and Output.object', { timeout: TIMEOUT }, async () => {
    const o = await generateObject({ model: provider('mock-chat'), schema: City, prompt: 'Describe Paris.', maxRetries: 0 });
    City.parse(o.object);
    const t = await generateText({ model: provider('mock-chat'), output: Output.object({ schema: City }), prompt: 'Describe Paris.', maxRetries: 0 });
    City.parse(t.output);
  });
});
