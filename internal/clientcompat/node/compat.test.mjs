// Real-client compatibility tests for mockgateway.
//
// Drives a running mockgateway with unmodified, pinned clients:
//   - the official `openai` Node SDK (Chat Completions), and
//   - the Vercel AI SDK (`ai` + `@ai-sdk/openai`) in chat mode: `openai.chat(id)`.
//
// Run:  npm ci && MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test
// Optional: MOCKGATEWAY_API_KEY (if the service runs with a local key; default "dummy").

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI, { APIError, BadRequestError, NotFoundError } from 'openai';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import { createOpenAI } from '@ai-sdk/openai';
import {
  APICallError,
  Output,
  generateObject,
  generateText,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
} from 'ai';
import { z } from 'zod';

const BASE_URL = process.env.MOCKGATEWAY_BASE_URL;
if (!BASE_URL) {
  const msg =
    'MOCKGATEWAY_BASE_URL is not set. Start mockgateway and run e.g.\n' +
    '  MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test';
  console.error(msg);
  throw new Error(msg);
}
if (!/^https?:\/\/.+\/v1\/?$/.test(BASE_URL)) {
  throw new Error(`MOCKGATEWAY_BASE_URL must end in /v1 (got ${JSON.stringify(BASE_URL)})`);
}
const API_KEY = process.env.MOCKGATEWAY_API_KEY || 'dummy';
const TIMEOUT = 30_000; // per test; nothing here should take more than a second or two

// ---------------------------------------------------------------------------------------------
// shared fixtures

// Default client (default retries) for the happy paths, and a no-retry client for error cases.
const client = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, timeout: TIMEOUT });
const strictClient = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, timeout: TIMEOUT, maxRetries: 0 });

const USER_TEXT = 'Hello from the Node compatibility suite: 1, 2, 3.';

// A tool whose JSON Schema nests an object, an enum, an integer range and an array.
const WEATHER_PARAMETERS = {
  type: 'object',
  properties: {
    location: {
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        country: { type: 'string', description: 'ISO 3166 alpha-2 code' },
      },
      required: ['city', 'country'],
      additionalProperties: false,
    },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    fields: { type: 'array', items: { type: 'string' } },
  },
  required: ['location', 'unit', 'days', 'fields'],
  additionalProperties: false,
};
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the weather forecast for a location',
    parameters: WEATHER_PARAMETERS,
  },
};
// zod mirror of WEATHER_PARAMETERS, used to validate arguments and by the AI SDK tests.
const WeatherArgs = z.object({
  location: z.object({ city: z.string(), country: z.string() }),
  unit: z.enum(['celsius', 'fahrenheit']),
  days: z.number().int().min(1).max(7),
  fields: z.array(z.string()),
});

const PERSON_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    age: { type: 'integer', minimum: 0 },
    address: {
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
      required: ['street', 'city'],
      additionalProperties: false,
    },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['name', 'age', 'address', 'tags'],
  additionalProperties: false,
};
const Person = z.object({
  name: z.string(),
  age: z.number().int().min(0),
  address: z.object({ street: z.string(), city: z.string() }),
  tags: z.array(z.string()),
});

function userMessages(text = USER_TEXT) {
  return [{ role: 'user', content: text }];
}

function assertUsage(usage, label = 'usage') {
  assert.ok(usage, `${label} is present`);
  for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens']) {
    assert.ok(Number.isInteger(usage[k]) && usage[k] >= 0, `${label}.${k} is a non-negative integer (got ${usage[k]})`);
  }
  assert.ok(usage.prompt_tokens > 0, `${label}.prompt_tokens > 0`);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens, `${label}: total = prompt + completion`);
}

// Asserts that `value` is a valid instance of the zod schema, with a readable failure message.
function assertMatches(schema, value) {
  const r = schema.safeParse(value);
  assert.ok(r.success, `value ${JSON.stringify(value)} does not match the schema: ${r.error?.message}`);
  return r.data;
}

function assertRequestId(headers, label = 'response') {
  const id = headers.get('x-request-id');
  assert.ok(id && /^[A-Za-z0-9._:-]{1,128}$/.test(id), `${label} carries a valid x-request-id (got ${id})`);
  return id;
}

// Collects a raw SDK stream into per-choice text, tool calls, finish reasons and usage chunks.
async function collectStream(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const choices = new Map();
  const usageChunks = [];
  for (const chunk of chunks) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.ok(Array.isArray(chunk.choices), 'chunk.choices is an array');
    assert.ok(!('error' in chunk), 'a normal chunk never has an error key');
    if (chunk.usage) usageChunks.push(chunk);
    for (const c of chunk.choices) {
      assert.ok(Number.isInteger(c.index), 'choice carries index');
      assert.ok(c.delta && typeof c.delta === 'object', 'choice carries delta');
      let acc = choices.get(c.index);
      if (!acc) {
        acc = { role: undefined, content: '', contentDeltas: 0, toolCalls: [], argDeltas: 0, finish: [] };
        choices.set(c.index, acc);
      }
      if (c.delta.role) acc.role = c.delta.role;
      if (typeof c.delta.content === 'string' && c.delta.content.length > 0) {
        acc.content += c.delta.content;
        acc.contentDeltas++;
      }
      for (const tc of c.delta.tool_calls ?? []) {
        assert.ok(Number.isInteger(tc.index), 'tool call delta carries index');
        let call = acc.toolCalls[tc.index];
        if (!call) {
          // first delta of a call: id, type, function.name, arguments ""
          assert.ok(tc.id, 'first tool-call delta carries id');
          assert.equal(tc.type, 'function', 'first tool-call delta carries type function');
          assert.ok(tc.function?.name, 'first tool-call delta carries function.name');
          call = acc.toolCalls[tc.index] = { id: tc.id, name: tc.function.name, arguments: '' };
        }
        if (tc.function?.arguments) {
          call.arguments += tc.function.arguments;
          acc.argDeltas++;
        }
      }
      if (c.finish_reason) acc.finish.push(c.finish_reason);
    }
  }
  return { chunks, choices, usageChunks };
}

// ---------------------------------------------------------------------------------------------
// official openai SDK

describe('openai SDK', { timeout: TIMEOUT * 10 }, () => {
  test('models.list returns only executable mock-* models', { timeout: TIMEOUT }, async () => {
    const ids = [];
    for await (const m of client.models.list()) {
      assert.equal(m.object, 'model');
      assert.equal(typeof m.created, 'number');
      assert.equal(typeof m.owned_by, 'string');
      ids.push(m.id);
    }
    for (const id of ['mock-echo', 'mock-chat', 'mock-tools']) assert.ok(ids.includes(id), `${id} listed (got ${ids})`);
    for (const id of ids) assert.match(id, /^mock-/, `only mock models are listed (got ${id})`);
    for (const id of ['gpt-4o', 'gpt-4.1-mini', 'claude-sonnet-4', 'gemini-2.5-pro']) assert.ok(!ids.includes(id));

    const again = [];
    for await (const m of client.models.list()) again.push(m.id);
    assert.deepEqual(again, ids, 'model list is stable');
  });

  test('models.retrieve: mock model found; external and unknown models are 404 model_not_found', { timeout: TIMEOUT }, async () => {
    const m = await client.models.retrieve('mock-echo');
    assert.equal(m.id, 'mock-echo');
    assert.equal(m.object, 'model');
    for (const id of ['gpt-4o', 'mock-does-not-exist']) {
      await assert.rejects(strictClient.models.retrieve(id), (e) => {
        assert.ok(e instanceof NotFoundError, `NotFoundError for ${id} (got ${e?.constructor?.name}: ${e?.message})`);
        assert.equal(e.status, 404);
        assert.equal(e.code, 'model_not_found');
        return true;
      });
    }
  });

  test('JSON chat with mock-echo: exact content, usage, x-request-id', { timeout: TIMEOUT }, async () => {
    const { data, response, request_id } = await client.chat.completions
      .create({ model: 'mock-echo', messages: userMessages() })
      .withResponse();
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const rid = assertRequestId(response.headers);
    assert.equal(request_id, rid, 'SDK exposes x-request-id as request_id');

    assert.match(data.id, /^chatcmpl-/);
    assert.equal(data.object, 'chat.completion');
    assert.equal(typeof data.created, 'number');
    assert.equal(data.model, 'mock-echo');
    assert.equal(data.choices.length, 1);
    const [choice] = data.choices;
    assert.equal(choice.index, 0);
    assert.equal(choice.message.role, 'assistant');
    assert.equal(choice.message.content, 'echo: ' + USER_TEXT);
    assert.equal(choice.finish_reason, 'stop');
    assertUsage(data.usage);
    assert.ok(data.usage.completion_tokens > 0);
  });

  test('a valid incoming x-request-id is kept', { timeout: TIMEOUT }, async () => {
    const mine = 'node-compat.req:0001';
    const { response, request_id } = await client.chat.completions
      .create({ model: 'mock-echo', messages: userMessages() }, { headers: { 'x-request-id': mine } })
      .withResponse();
    assert.equal(response.headers.get('x-request-id'), mine);
    assert.equal(request_id, mine);
  });

  test('system, developer and text-part content are accepted; echo uses the last user message', { timeout: TIMEOUT }, async () => {
    const res = await client.chat.completions.create({
      model: 'mock-echo',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: 'Answer in English.' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: [{ type: 'text', text: 'second ' }, { type: 'text', text: 'question' }] },
      ],
    });
    assert.equal(res.choices[0].message.content, 'echo: second question');
  });

  test('streaming mock-echo with include_usage matches the JSON call', { timeout: TIMEOUT }, async () => {
    const params = { model: 'mock-echo', messages: userMessages() };
    const json = await client.chat.completions.create(params);

    const { data: stream, response } = await client.chat.completions
      .create({ ...params, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assertRequestId(response.headers, 'stream response');

    const { chunks, choices, usageChunks } = await collectStream(stream);
    assert.ok(chunks.length >= 3, 'role chunk, content chunk(s), finish chunk');
    const ids = new Set(chunks.map((c) => c.id));
    assert.equal(ids.size, 1, 'every chunk has the same id');
    assert.match([...ids][0], /^chatcmpl-/);
    assert.equal(new Set(chunks.map((c) => c.created)).size, 1, 'every chunk has the same created');
    for (const c of chunks) assert.equal(c.model, 'mock-echo');

    assert.deepEqual([...choices.keys()], [0]);
    const acc = choices.get(0);
    assert.equal(acc.role, 'assistant');
    assert.equal(acc.content, json.choices[0].message.content, 'deltas concatenate to the JSON content');
    assert.equal(acc.content, 'echo: ' + USER_TEXT);
    assert.deepEqual(acc.finish, ['stop'], 'exactly one finish_reason');

    assert.equal(usageChunks.length, 1, 'exactly one usage chunk');
    const last = chunks[chunks.length - 1];
    assert.equal(usageChunks[0], last, 'the usage chunk is the last chunk');
    assert.deepEqual(last.choices, [], 'the usage chunk has empty choices');
    for (const c of chunks.slice(0, -1)) assert.ok('usage' in c && c.usage === null, 'other chunks carry "usage": null');
    assertUsage(last.usage, 'stream usage');
    assert.equal(last.usage.completion_tokens, acc.contentDeltas, 'completion_tokens = number of content deltas');
    assert.deepEqual(
      { p: last.usage.prompt_tokens, c: last.usage.completion_tokens, t: last.usage.total_tokens },
      { p: json.usage.prompt_tokens, c: json.usage.completion_tokens, t: json.usage.total_tokens },
      'stream usage equals JSON usage',
    );
  });

  test('streaming without include_usage has no usage key', { timeout: TIMEOUT }, async () => {
    const stream = await client.chat.completions.create({ model: 'mock-chat', messages: userMessages(), stream: true });
    const { chunks, choices } = await collectStream(stream);
    for (const c of chunks) assert.ok(!('usage' in c), 'no usage key without include_usage');
    assert.ok(choices.get(0).content.length > 0);
    assert.equal(choices.get(0).finish.length, 1);
  });

  test('chat.completions.stream() helper assembles a final completion', { timeout: TIMEOUT }, async () => {
    const params = { model: 'mock-chat', messages: userMessages('stream helper'), seed: 11 };
    const json = await client.chat.completions.create(params);
    const runner = client.chat.completions.stream({ ...params, stream_options: { include_usage: true } });
    const deltas = [];
    runner.on('content', (delta) => deltas.push(delta));
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0].message.content, json.choices[0].message.content);
    assert.equal(deltas.join(''), json.choices[0].message.content);
    assert.equal(final.choices[0].finish_reason, 'stop');
    assertUsage(final.usage, 'helper usage');
  });

  test('determinism: the same mock-chat request twice gives identical content; another seed differs', { timeout: TIMEOUT }, async () => {
    const params = { model: 'mock-chat', messages: userMessages('Tell me something.'), seed: 42, temperature: 1.3 };
    const a = await client.chat.completions.create(params);
    const b = await client.chat.completions.create(params);
    assert.ok(a.choices[0].message.content.length > 0);
    assert.equal(a.choices[0].message.content, b.choices[0].message.content);
    assert.equal(a.choices[0].finish_reason, b.choices[0].finish_reason);
    assert.deepEqual(a.usage, b.usage);
    const c = await client.chat.completions.create({ ...params, seed: 43 });
    assert.notEqual(c.choices[0].message.content, a.choices[0].message.content, 'a different seed gives different content');
  });

  test('max_tokens cuts the output with finish_reason "length"', { timeout: TIMEOUT }, async () => {
    const res = await client.chat.completions.create({ model: 'mock-chat', messages: userMessages(), max_tokens: 2 });
    assert.equal(res.choices[0].finish_reason, 'length');
    assert.equal(res.usage.completion_tokens, 2);
    assertUsage(res.usage);
  });

  test('tool-call round trip with mock-tools (nested JSON schema)', { timeout: TIMEOUT }, async () => {
    const messages = [{ role: 'user', content: 'What is the weather in Paris for the next days?' }];
    const { data: first, response } = await client.chat.completions
      .create({ model: 'mock-tools', messages, tools: [WEATHER_TOOL] })
      .withResponse();
    assertRequestId(response.headers);
    const choice = first.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.role, 'assistant');
    assert.ok(Array.isArray(choice.message.tool_calls) && choice.message.tool_calls.length >= 1);
    for (const call of choice.message.tool_calls) {
      assert.match(call.id, /^call_/);
      assert.equal(call.type, 'function');
      assert.equal(call.function.name, 'get_weather');
      assert.equal(typeof call.function.arguments, 'string');
      const args = JSON.parse(call.function.arguments);
      assertMatches(WeatherArgs, args); // throws (with a precise path) if not a valid instance of the schema
    }
    assertUsage(first.usage);

    // Deterministic tool calls (ids included).
    const again = await client.chat.completions.create({ model: 'mock-tools', messages, tools: [WEATHER_TOOL] });
    assert.deepEqual(again.choices[0].message.tool_calls, choice.message.tool_calls);

    // Send back the assistant message exactly as the SDK returned it (refusal/annotations included)
    // plus one tool message per call: the model answers with text.
    const followUp = [
      ...messages,
      choice.message,
      ...choice.message.tool_calls.map((call) => ({
        role: 'tool',
        tool_call_id: call.id,
        content: JSON.stringify({ temperature: 21, sky: 'clear' }),
      })),
    ];
    const second = await client.chat.completions.create({ model: 'mock-tools', messages: followUp, tools: [WEATHER_TOOL] });
    const answer = second.choices[0];
    assert.equal(answer.finish_reason, 'stop');
    assert.equal(typeof answer.message.content, 'string');
    assert.ok(answer.message.content.length > 0, 'text answer after the tool result');
    assert.ok(!answer.message.tool_calls || answer.message.tool_calls.length === 0, 'no further tool calls');
    assertUsage(second.usage);
  });

  test('tool_choice naming a function is honoured', { timeout: TIMEOUT }, async () => {
    const other = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] } } };
    const res = await client.chat.completions.create({
      model: 'mock-tools',
      messages: userMessages('what time is it?'),
      tools: [WEATHER_TOOL, other],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const calls = res.choices[0].message.tool_calls;
    assert.ok(calls?.length >= 1);
    assert.equal(calls[0].function.name, 'get_time');
    assert.equal(typeof JSON.parse(calls[0].function.arguments).tz, 'string');
  });

  test('streaming tool calls: argument fragments accumulate to valid JSON', { timeout: TIMEOUT }, async () => {
    const params = { model: 'mock-tools', messages: userMessages('weather in Oslo?'), tools: [WEATHER_TOOL] };
    const json = await client.chat.completions.create(params);
    const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
    const { choices, usageChunks } = await collectStream(stream);
    const acc = choices.get(0);
    assert.deepEqual(acc.finish, ['tool_calls']);
    assert.ok(acc.toolCalls.length >= 1);
    for (const call of acc.toolCalls) {
      assert.match(call.id, /^call_/);
      assert.equal(call.name, 'get_weather');
      assertMatches(WeatherArgs, JSON.parse(call.arguments));
    }
    assert.ok(acc.argDeltas >= 1, 'arguments arrive as fragments');
    // Tool calls are a pure function of the request's generation inputs (stream is not one of them).
    assert.deepEqual(
      acc.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
      json.choices[0].message.tool_calls.map((c) => ({ name: c.function.name, arguments: c.function.arguments })),
      'streamed tool calls equal the JSON tool calls',
    );
    assert.equal(usageChunks.length, 1);
    assert.equal(usageChunks[0].usage.completion_tokens, acc.argDeltas, 'completion_tokens = number of argument deltas');
  });

  test('stream() helper with zodFunction (strict tools) parses tool arguments', { timeout: TIMEOUT }, async () => {
    const runner = client.chat.completions.stream({
      model: 'mock-tools',
      messages: userMessages('weather in Rome?'),
      tools: [zodFunction({ name: 'get_weather', parameters: WeatherArgs, description: 'Get the weather' })],
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0].message.tool_calls[0];
    assert.equal(call.function.name, 'get_weather');
    assertMatches(WeatherArgs, call.function.parsed_arguments);
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
  });

  test('runTools() helper: the SDK executes the tool locally and gets a text answer', { timeout: TIMEOUT }, async () => {
    const executed = [];
    const runner = client.chat.completions.runTools({
      model: 'mock-tools',
      messages: userMessages('weather in Porto?'),
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get the weather forecast for a location',
            parameters: WEATHER_PARAMETERS,
            parse: JSON.parse,
            function: (args) => {
              executed.push(args);
              return { temperature: 23, sky: 'sunny' };
            },
          },
        },
      ],
    }, { maxChatCompletions: 4 }); // runner option, not a request field
    const content = await runner.finalContent();
    assert.ok(executed.length >= 1, 'tool executed');
    assertMatches(WeatherArgs, executed[0]);
    assert.equal(typeof content, 'string');
    assert.ok(content.length > 0, 'final text answer');
    const msgs = runner.messages;
    assert.ok(msgs.some((m) => m.role === 'tool'), 'tool message sent back');
  });

  test('n: 2 returns two choices (JSON and stream)', { timeout: TIMEOUT }, async () => {
    const params = { model: 'mock-chat', messages: userMessages('two answers please'), n: 2 };
    const json = await client.chat.completions.create(params);
    assert.equal(json.choices.length, 2);
    assert.deepEqual(json.choices.map((c) => c.index).sort(), [0, 1]);
    for (const c of json.choices) {
      assert.ok(c.message.content.length > 0);
      assert.ok(c.finish_reason);
    }
    assertUsage(json.usage);

    const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
    const { chunks, choices, usageChunks } = await collectStream(stream);
    for (const c of chunks) if (!c.usage) assert.equal(c.choices.length, 1, 'each stream chunk carries one choice');
    assert.deepEqual([...choices.keys()].sort(), [0, 1]);
    for (const c of json.choices) {
      const acc = choices.get(c.index);
      assert.equal(acc.content, c.message.content, `stream choice ${c.index} equals JSON choice`);
      assert.deepEqual(acc.finish, [c.finish_reason]);
    }
    assert.equal(usageChunks.length, 1);
    assert.equal(usageChunks[0].usage.completion_tokens, json.usage.completion_tokens, 'usage sums all choices');
  });

  test('response_format json_schema gives JSON.parse-able content matching the schema', { timeout: TIMEOUT }, async () => {
    const res = await client.chat.completions.create({
      model: 'mock-chat',
      messages: userMessages('Describe a person.'),
      response_format: { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: PERSON_SCHEMA } },
    });
    assert.equal(res.choices[0].finish_reason, 'stop');
    const value = JSON.parse(res.choices[0].message.content);
    assertMatches(Person, value);
  });

  test('chat.completions.parse() with zodResponseFormat', { timeout: TIMEOUT }, async () => {
    const res = await client.chat.completions.parse({
      model: 'mock-chat',
      messages: userMessages('Describe a person.'),
      response_format: zodResponseFormat(Person, 'person'),
    });
    const msg = res.choices[0].message;
    assert.ok(msg.parsed, 'SDK parsed the content');
    assertMatches(Person, msg.parsed);
  });

  test('error: unknown model is NotFoundError 404 model_not_found', { timeout: TIMEOUT }, async () => {
    await assert.rejects(
      strictClient.chat.completions.create({ model: 'mock-does-not-exist', messages: userMessages() }),
      (e) => {
        assert.ok(e instanceof NotFoundError, `NotFoundError (got ${e?.constructor?.name}: ${e?.message})`);
        assert.equal(e.status, 404);
        assert.equal(e.code, 'model_not_found');
        assert.equal(e.type, 'invalid_request_error');
        assert.equal(e.param, 'model');
        assert.equal(typeof e.error.message, 'string');
        assert.ok(e.requestID, 'error exposes x-request-id as requestID');
        return true;
      },
    );
  });

  test('error: unknown parameter (extra body) is BadRequestError unknown_parameter with param', { timeout: TIMEOUT }, async () => {
    const params = { model: 'mock-echo', messages: userMessages() };
    // explicit extra-body mechanism: the `body` request option replaces the serialized body
    await assert.rejects(
      strictClient.chat.completions.create(params, { body: { ...params, mock_compat_unknown: 1 } }),
      (e) => {
        assert.ok(e instanceof BadRequestError, `BadRequestError (got ${e?.constructor?.name}: ${e?.message})`);
        assert.equal(e.status, 400);
        assert.equal(e.code, 'unknown_parameter');
        assert.equal(e.param, 'mock_compat_unknown');
        assert.equal(e.type, 'invalid_request_error');
        return true;
      },
    );
    // undocumented param passed inline (sent as-is by the SDK)
    await assert.rejects(
      strictClient.chat.completions.create({ ...params, temprature: 0.5 }),
      (e) => e instanceof BadRequestError && e.code === 'unknown_parameter' && e.param === 'temprature',
    );
  });

  test('error: known but unsupported parameter is unsupported_parameter', { timeout: TIMEOUT }, async () => {
    await assert.rejects(
      strictClient.chat.completions.create({ model: 'mock-echo', messages: userMessages(), logprobs: true }),
      (e) => e instanceof BadRequestError && e.code === 'unsupported_parameter' && e.param === 'logprobs',
    );
  });

  test('error: metadata-only model gpt-4o is 400 model_not_executable', { timeout: TIMEOUT }, async () => {
    await assert.rejects(strictClient.chat.completions.create({ model: 'gpt-4o', messages: userMessages() }), (e) => {
      assert.ok(e instanceof BadRequestError, `BadRequestError (got ${e?.constructor?.name}: ${e?.message})`);
      assert.equal(e.status, 400);
      assert.equal(e.code, 'model_not_executable');
      return true;
    });
  });

  test('error: tools sent to a model that is not tool-capable', { timeout: TIMEOUT }, async () => {
    await assert.rejects(
      strictClient.chat.completions.create({ model: 'mock-echo', messages: userMessages(), tools: [WEATHER_TOOL] }),
      (e) => e instanceof BadRequestError && e.code === 'tools_not_supported' && e.param === 'tools',
    );
  });

  test('error: streaming request to an unknown model fails before the stream starts', { timeout: TIMEOUT }, async () => {
    await assert.rejects(
      strictClient.chat.completions.create({ model: 'mock-nope', messages: userMessages(), stream: true }),
      (e) => e instanceof NotFoundError && e.code === 'model_not_found',
    );
  });

  test('error: intentionally unsupported surfaces are 404 unsupported_surface', { timeout: TIMEOUT }, async () => {
    await assert.rejects(strictClient.embeddings.create({ model: 'mock-echo', input: 'hi' }), (e) => {
      assert.ok(e instanceof NotFoundError, `NotFoundError (got ${e?.constructor?.name}: ${e?.message})`);
      assert.equal(e.code, 'unsupported_surface');
      return true;
    });
    await assert.rejects(
      strictClient.completions.create({ model: 'mock-echo', prompt: 'hi' }),
      (e) => e instanceof NotFoundError && e.code === 'unsupported_surface',
    );
  });

  test('error bodies are OpenAI-shaped for APIError (all four keys)', { timeout: TIMEOUT }, async () => {
    const err = await strictClient.chat.completions
      .create({ model: 'gpt-4o', messages: userMessages() })
      .then(() => null, (e) => e);
    assert.ok(err instanceof APIError);
    assert.deepEqual(Object.keys(err.error).sort(), ['code', 'message', 'param', 'type']);
  });
});

// ---------------------------------------------------------------------------------------------
// Vercel AI SDK, chat mode (/v1/chat/completions, not /v1/responses)

describe('Vercel AI SDK (chat mode)', { timeout: TIMEOUT * 10 }, () => {
  const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
  const PROMPT = 'Write a short deterministic sentence.';

  test('generateText with mock-echo returns the echo', { timeout: TIMEOUT }, async () => {
    const res = await generateText({ model: provider.chat('mock-echo'), prompt: USER_TEXT, maxRetries: 0 });
    assert.equal(res.text, 'echo: ' + USER_TEXT);
    assert.equal(res.finishReason, 'stop');
    assert.ok(res.response.headers['x-request-id'], 'x-request-id in response headers');
  });

  test('generateText and streamText (mock-chat, same prompt and seed) agree', { timeout: TIMEOUT }, async () => {
    const model = provider.chat('mock-chat');
    const gen = await generateText({ model, prompt: PROMPT, seed: 7, maxRetries: 0 });
    assert.ok(gen.text.length > 0, 'non-empty text');
    assert.equal(gen.finishReason, 'stop');
    for (const k of ['inputTokens', 'outputTokens', 'totalTokens']) {
      assert.equal(typeof gen.usage[k], 'number', `usage.${k} is a number`);
    }
    assert.equal(gen.usage.totalTokens, gen.usage.inputTokens + gen.usage.outputTokens);
    assert.match(gen.response.id, /^chatcmpl-/);
    assert.equal(gen.response.modelId, 'mock-chat');

    const errors = [];
    const st = streamText({ model, prompt: PROMPT, seed: 7, maxRetries: 0, onError: ({ error }) => errors.push(error) });
    let streamed = '';
    for await (const delta of st.textStream) streamed += delta;
    assert.deepEqual(errors, []);
    assert.equal(streamed, gen.text, 'streamed text equals generated text');
    assert.equal(await st.text, gen.text);
    assert.equal(await st.finishReason, 'stop');
    const usage = await st.usage;
    assert.equal(usage.inputTokens, gen.usage.inputTokens);
    assert.equal(usage.outputTokens, gen.usage.outputTokens);
    const resp = await st.response;
    assert.match(resp.id, /^chatcmpl-/);
    assert.ok(resp.headers?.['x-request-id']);
  });

  test('maxOutputTokens is sent as max_tokens and cuts with finishReason "length"', { timeout: TIMEOUT }, async () => {
    const res = await generateText({ model: provider.chat('mock-chat'), prompt: PROMPT, maxOutputTokens: 2, maxRetries: 0 });
    assert.equal(res.finishReason, 'length');
    assert.equal(res.usage.outputTokens, 2);
    assert.equal(res.request.body.max_tokens, 2, 'chat mode sends max_tokens for non-reasoning model ids');
  });

  test('generateText tool call on mock-tools (zod schema, no execute)', { timeout: TIMEOUT }, async () => {
    const res = await generateText({
      model: provider.chat('mock-tools'),
      prompt: 'What is the weather in Lisbon?',
      tools: { get_weather: tool({ description: 'Get the weather forecast', inputSchema: WeatherArgs }) },
      stopWhen: stepCountIs(1),
      maxRetries: 0,
    });
    assert.equal(res.finishReason, 'tool-calls');
    assert.ok(res.toolCalls.length >= 1);
    const call = res.toolCalls[0];
    assert.equal(call.toolName, 'get_weather');
    assert.ok(!call.invalid, `tool input was valid (error: ${call.error})`);
    assert.match(call.toolCallId, /^call_/);
    assertMatches(WeatherArgs, call.input);
  });

  test('generateText tool round trip (jsonSchema tool with execute, two steps)', { timeout: TIMEOUT }, async () => {
    const executed = [];
    const res = await generateText({
      model: provider.chat('mock-tools'),
      prompt: 'What is the weather in Lisbon?',
      tools: {
        get_weather: tool({
          description: 'Get the weather forecast',
          inputSchema: jsonSchema(WEATHER_PARAMETERS),
          execute: async (input) => {
            executed.push(input);
            return { temperature: 19, sky: 'cloudy' };
          },
        }),
      },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    assert.ok(executed.length >= 1, 'tool executed by the client');
    assertMatches(WeatherArgs, executed[0]);
    assert.equal(res.steps.length, 2);
    assert.equal(res.steps[0].finishReason, 'tool-calls');
    assert.equal(res.finishReason, 'stop');
    assert.ok(res.text.length > 0, 'final text answer after the tool result');
  });

  test('streamText tool call on mock-tools', { timeout: TIMEOUT }, async () => {
    const errors = [];
    const st = streamText({
      model: provider.chat('mock-tools'),
      prompt: 'Weather in Madrid?',
      tools: { get_weather: tool({ description: 'Get the weather forecast', inputSchema: WeatherArgs }) },
      stopWhen: stepCountIs(1),
      maxRetries: 0,
      onError: ({ error }) => errors.push(error),
    });
    const calls = await st.toolCalls;
    assert.deepEqual(errors, []);
    assert.ok(calls.length >= 1);
    assert.equal(calls[0].toolName, 'get_weather');
    assert.ok(!calls[0].invalid, `tool input was valid (error: ${calls[0].error})`);
    assertMatches(WeatherArgs, calls[0].input);
    assert.equal(await st.finishReason, 'tool-calls');
  });

  test('structured output: generateText + Output.object and generateObject (json_schema)', { timeout: TIMEOUT }, async () => {
    const model = provider.chat('mock-chat');
    const out = await generateText({ model, prompt: 'Describe a person.', output: Output.object({ schema: Person }), maxRetries: 0 });
    assertMatches(Person, out.output);

    const obj = await generateObject({ model, prompt: 'Describe a person.', schema: Person, maxRetries: 0 });
    assertMatches(Person, obj.object);
    assert.equal(obj.finishReason, 'stop');
  });

  test('error: unknown model is APICallError with statusCode 404', { timeout: TIMEOUT }, async () => {
    await assert.rejects(
      generateText({ model: provider.chat('mock-does-not-exist'), prompt: 'hi', maxRetries: 0 }),
      (e) => {
        assert.ok(APICallError.isInstance(e), `APICallError (got ${e?.constructor?.name}: ${e?.message})`);
        assert.equal(e.statusCode, 404);
        assert.equal(e.isRetryable, false);
        assert.equal(e.data?.error?.code, 'model_not_found');
        assert.equal(typeof e.message, 'string');
        assert.ok(e.responseHeaders?.['x-request-id']);
        return true;
      },
    );
  });

  test('error: streamText to an unknown model reports APICallError 404 via onError', { timeout: TIMEOUT }, async () => {
    const errors = [];
    const st = streamText({
      model: provider.chat('mock-does-not-exist'),
      prompt: 'hi',
      maxRetries: 0,
      onError: ({ error }) => errors.push(error),
    });
    for await (const _ of st.textStream) {
      // drain
    }
    assert.equal(errors.length, 1);
    assert.ok(APICallError.isInstance(errors[0]));
    assert.equal(errors[0].statusCode, 404);
  });
});

// ---------------------------------------------------------------------------------------------
// Simulation: unmodified clients with their built-in retries against simulated faults.

describe('simulated faults', { timeout: TIMEOUT * 10 }, () => {
  const hdr = (fault) => ({ headers: { 'x-mock-fault': fault } });
  const body = { model: 'mock-echo', messages: [{ role: 'user', content: USER_TEXT }] };

  // The SDK sends x-stainless-retry-count on every try; the mock reads it, so "fail the first
  // two attempts" ends in a success on the SDK's third (default maxRetries is 2).
  for (const fault of ['rate_limit;attempts=2;retry_after=10ms', 'unavailable;attempts=2;retry_after=10ms']) {
    test(`openai SDK default retries recover from ${fault}`, { timeout: TIMEOUT }, async () => {
      const res = await client.chat.completions.create(body, hdr(fault));
      assert.equal(res.choices[0].message.content, 'echo: ' + USER_TEXT);
    });
  }

  test('openai SDK retries exhausted: RateLimitError 429 simulated_rate_limit', { timeout: TIMEOUT }, async () => {
    await assert.rejects(client.chat.completions.create(body, hdr('rate_limit;attempts=5;retry_after=10ms')), (err) => {
      assert.ok(err instanceof OpenAI.RateLimitError, `got ${err?.constructor?.name}`);
      assert.equal(err.status, 429);
      assert.equal(err.code, 'simulated_rate_limit');
      assert.ok(err.headers.get('retry-after'));
      return true;
    });
  });

  test('openai SDK stream: a mid-stream error frame ends the iteration with an APIError', { timeout: TIMEOUT }, async () => {
    const stream = await strictClient.chat.completions.create({ ...body, stream: true }, hdr('stream_error;after=2'));
    let chunks = 0;
    await assert.rejects(
      (async () => {
        for await (const _ of stream) chunks++;
      })(),
      (err) => {
        assert.ok(err instanceof APIError);
        assert.equal(err.code, 'simulated_stream_error');
        return true;
      },
    );
    assert.equal(chunks, 2);
  });

  test('openai SDK stream: an abrupt cut ends the iteration with an error, no finish_reason', { timeout: TIMEOUT }, async () => {
    const stream = await strictClient.chat.completions.create({ ...body, stream: true }, hdr('stream_cut;after=3'));
    const seen = [];
    let failed = false;
    try {
      for await (const c of stream) seen.push(c);
    } catch {
      failed = true;
    }
    assert.equal(seen.length, 3);
    assert.ok(seen.every((c) => c.choices.every((ch) => ch.finish_reason == null)), 'a cut stream never finishes');
    assert.ok(failed, 'the cut surfaces as an error (terminated)');
  });

  test('the mock-gateway policy is reported in headers; the client just gets an answer', { timeout: TIMEOUT }, async () => {
    const { data, response } = await strictClient.chat.completions
      .create({ model: 'mock-gateway', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(data.model, 'mock-chat');
    assert.equal(response.headers.get('x-mock-gateway-attempts'), '3');
    assert.equal(response.headers.get('x-mock-gateway-fallback-from'), 'mock-gateway');
  });

  test('Vercel AI SDK: a 503 with maxRetries 0 is an APICallError that is retryable', { timeout: TIMEOUT }, async () => {
    // The AI SDK sends no attempt counter, so "fail the first K attempts" cannot recover for
    // it statelessly; what it must see is a retryable error with the right status.
    await assert.rejects(
      generateText({ model: createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY }).chat('mock-echo'), prompt: 'hi', maxRetries: 0, headers: { 'x-mock-fault': 'unavailable' } }),
      (err) => {
        assert.ok(APICallError.isInstance(err));
        assert.equal(err.statusCode, 503);
        assert.equal(err.isRetryable, true);
        return true;
      },
    );
  });
});
