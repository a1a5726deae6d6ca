// Fixtures, scopes and the call journal (docs/fixtures.md) driven by real, unmodified clients:
// the official openai SDK, LangChain JS (@langchain/openai ChatOpenAI with a bound tool) and the
// OpenAI Agents SDK (@openai/agents with OpenAIChatCompletionsModel). Each test scripts the mock
// at run time in its own scope (POST /_mock/fixtures with x-mock-scope), runs the two-turn agent
// loop of the docs' worked example entirely on those fixtures — the model calls get_weather with
// {"city":"Paris"}, the client runs the tool and sends the result back, the model answers "It is
// sunny in Paris." — JSON and streamed, then checks the scope's journal (weather-answer, then
// weather-call, newest first, both 200, nothing from another scope) and drops the scope.
//
// Run:  npm ci && MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test fixtures.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';

import OpenAI from 'openai';
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool as agentsTool } from '@openai/agents';
import { z } from 'zod';

const BASE_URL = process.env.MOCKGATEWAY_BASE_URL;
if (!BASE_URL) throw new Error('MOCKGATEWAY_BASE_URL is not set (e.g. http://127.0.0.1:8080/v1)');
if (!/^https?:\/\/.+\/v1\/?$/.test(BASE_URL)) {
  throw new Error(`MOCKGATEWAY_BASE_URL must end in /v1 (got ${JSON.stringify(BASE_URL)})`);
}
const ORIGIN = BASE_URL.replace(/\/v1\/?$/, ''); // the control API lives at <origin>/_mock/*
const API_KEY = process.env.MOCKGATEWAY_API_KEY || 'dummy';
const TIMEOUT = 30_000;

// Traces would go to OpenAI's platform: nothing leaves the machine.
setTracingDisabled(true);

const QUESTION = "What's the weather in Paris?";
const ANSWER = 'It is sunny in Paris.';
const TOOL_RESULT = JSON.stringify({ sky: 'clear', celsius: 24 });

// The worked example of docs/fixtures.md; reply text and city are parameters for the test of
// two concurrent scopes.
function weatherFixtures({ city = 'Paris', answer = ANSWER } = {}) {
  return {
    fixtures: [
      {
        name: 'weather-call',
        match: { model: 'mock-tools', last_user: { contains: 'weather' }, tools: ['get_weather'] },
        reply: { tool_calls: [{ name: 'get_weather', arguments: { city } }] },
      },
      {
        name: 'weather-answer',
        priority: 10, // on turn 2 weather-call matches too (same last user message)
        match: { tool_result: 'get_weather' },
        reply: { content: answer },
      },
    ],
  };
}

// A scope id of the x-mock-scope syntax, unique per run: node-<client>-<json|stream>-<random>.
function newScope(client, streaming) {
  return `node-${client}-${streaming ? 'stream' : 'json'}-${randomBytes(6).toString('hex')}`;
}

// Headers every client sends: the scope, and no simulated latency to keep the suite fast.
function scopeHeaders(scope) {
  return { 'x-mock-scope': scope, 'x-mock-latency': 'instant' };
}

// control calls the mock's control API and returns its JSON answer; a non-2xx answer fails the
// test with the response body.
async function control(method, path, { scope, body } = {}) {
  const headers = { Authorization: `Bearer ${API_KEY}` };
  if (scope) headers['x-mock-scope'] = scope;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${ORIGIN}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path} (scope ${scope ?? '-'}): ${res.status} ${text}`);
  return JSON.parse(text);
}

async function addFixtures(scope, fixtures) {
  const added = await control('POST', '/_mock/fixtures', { scope, body: fixtures });
  assert.equal(added.object, 'fixtures.added');
  assert.equal(added.scope, scope);
  assert.deepEqual(added.names, fixtures.fixtures.map((f) => f.name));
}

async function journal(scope) {
  const out = await control('GET', `/_mock/journal?scope=${encodeURIComponent(scope)}`);
  assert.equal(out.scope, scope);
  return out.data;
}

async function dropScope(scope) {
  const out = await control('DELETE', `/_mock/scopes/${encodeURIComponent(scope)}`);
  assert.equal(out.object, 'scope.deleted');
  assert.equal(out.scope, scope);
  assert.equal(out.deleted, true, `scope ${scope} held no runtime fixtures when dropped`);
}

// withScope gives a test a fresh scope holding `fixtures`, runs it, and drops the scope after
// (also when the test fails).
async function withScope(scope, fixtures, fn) {
  await addFixtures(scope, fixtures);
  try {
    return await fn(scope);
  } finally {
    await dropScope(scope);
  }
}

// describeError puts what the mock answered into a failure message: status, the error body the
// SDK parsed (openai's APIError and LangChain's wrapper keep it as .error), and the journal's view
// of the scope's calls (status, error code, fixture).
async function describeError(err, scope) {
  const parts = [String(err?.stack ?? err)];
  if (err?.status !== undefined) parts.push(`status: ${err.status}`);
  if (err?.error !== undefined) parts.push(`body: ${JSON.stringify(err.error)}`);
  if (err?.cause) parts.push(`cause: ${String(err.cause?.message ?? err.cause)}`);
  try {
    const entries = await journal(scope);
    parts.push(
      `journal (newest first): ${JSON.stringify(
        entries.map((e) => ({ status: e.status, error_code: e.error_code, fixture: e.fixture, stream: e.stream })),
      )}`,
    );
  } catch (e) {
    parts.push(`journal unavailable: ${e.message}`);
  }
  return parts.join('\n');
}

// diagnosed runs one client call; a rejection fails the test with what the mock said.
async function diagnosed(scope, what, fn) {
  try {
    return await fn();
  } catch (err) {
    assert.fail(`${what} failed in scope ${scope}:\n${await describeError(err, scope)}`);
  }
}

// assertJournal checks the scope's journal after one loop: the answer, then the call (newest
// first), both answered 200 by the fixtures, streamed or not as asked, all filed under this scope.
async function assertJournal(scope, streaming) {
  const entries = await journal(scope);
  const summary = JSON.stringify(entries);
  assert.deepEqual(
    entries.map((e) => [e.fixture, e.status]),
    [
      ['weather-answer', 200],
      ['weather-call', 200],
    ],
    `journal of ${scope}: ${summary}`,
  );
  for (const e of entries) {
    assert.equal(e.scope, scope, `an entry from another scope: ${summary}`);
    assert.equal(e.route, '/v1/chat/completions', summary);
    assert.equal(e.model, 'mock-tools', summary);
    assert.equal(e.stream ?? false, streaming, `stream flag: ${summary}`);
    assert.equal(e.error_code, undefined, summary);
  }
  const [answer, call] = entries;
  assert.equal(call.finish_reason, 'tool_calls', summary);
  assert.equal(answer.finish_reason, 'stop', summary);
  // The second turn carried the assistant's call and the tool's result back.
  assert.equal(answer.shape?.messages?.tool, 1, `shape of the answer's request: ${summary}`);
  assert.equal(answer.shape?.tool_calls, 1, `shape of the answer's request: ${summary}`);
  assert.equal(call.shape?.messages?.tool, undefined, `shape of the call's request: ${summary}`);
}

// ---------------------------------------------------------------------------------------------
// the official openai SDK

const GET_WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The current weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};

function openaiClient(scope) {
  return new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, maxRetries: 0, timeout: TIMEOUT, defaultHeaders: scopeHeaders(scope) });
}

// streamedMessage sends one streamed request and assembles the assistant message from its deltas:
// content, and tool calls whose id, name and argument fragments arrive by index.
async function streamedMessage(client, params) {
  const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let content = null;
  const calls = [];
  let finish = null;
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      assert.equal(choice.index, 0);
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string') content = (content ?? '') + delta.content;
      for (const d of delta.tool_calls ?? []) {
        const call = (calls[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (d.id) call.id += d.id;
        if (d.function?.name) call.function.name += d.function.name;
        if (d.function?.arguments) call.function.arguments += d.function.arguments;
      }
      if (choice.finish_reason) {
        assert.equal(finish, null, 'a second finish_reason');
        finish = choice.finish_reason;
      }
    }
  }
  const message = { role: 'assistant', content };
  if (calls.length) message.tool_calls = calls;
  return { message, finish };
}

// openaiLoop runs the agent loop by hand: ask, run every tool call, send the results, until the
// model answers without calls. Returns the answer and the arguments get_weather received.
async function openaiLoop(scope, streaming) {
  const client = openaiClient(scope);
  const toolArgs = [];
  const getWeather = (args) => {
    toolArgs.push(args);
    return TOOL_RESULT;
  };
  const messages = [{ role: 'user', content: QUESTION }];
  for (let turn = 1; ; turn++) {
    assert.ok(turn <= 3, 'the loop does not end');
    const params = { model: 'mock-tools', messages, tools: [GET_WEATHER] };
    const { message, finish } = await diagnosed(scope, `turn ${turn}`, async () => {
      if (streaming) return streamedMessage(client, params);
      const resp = await client.chat.completions.create(params);
      return { message: resp.choices[0].message, finish: resp.choices[0].finish_reason };
    });
    if (!message.tool_calls?.length) {
      assert.equal(finish, 'stop');
      return { answer: message.content, toolArgs, turns: turn };
    }
    assert.equal(finish, 'tool_calls');
    messages.push(message);
    for (const call of message.tool_calls) {
      assert.equal(call.function.name, 'get_weather');
      assert.match(call.id, /\S/, 'a tool call without an id');
      messages.push({ role: 'tool', tool_call_id: call.id, content: getWeather(JSON.parse(call.function.arguments)) });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// LangChain JS: ChatOpenAI with a bound tool, the round trip as LangChain documents it

function chat(scope) {
  return new ChatOpenAI({
    model: 'mock-tools',
    apiKey: API_KEY,
    maxRetries: 0,
    configuration: { baseURL: BASE_URL, defaultHeaders: scopeHeaders(scope) },
  });
}

// Streamed, the answer is the concatenation of the chunks (see langchain.test.mjs for why not
// `streaming: true` with invoke).
async function concatStream(llm, messages) {
  let whole;
  for await (const chunk of await llm.stream(messages)) whole = whole ? whole.concat(chunk) : chunk;
  return whole;
}

async function langchainLoop(scope, streaming) {
  const toolArgs = [];
  const getWeather = langchainTool(
    async (args) => {
      toolArgs.push(args);
      return TOOL_RESULT;
    },
    {
      name: 'get_weather',
      description: 'The current weather in a city.',
      schema: z.object({ city: z.string().describe('The city') }),
    },
  );
  const llm = chat(scope).bindTools([getWeather]);
  const send = (messages, turn) =>
    diagnosed(scope, `turn ${turn}`, () => (streaming ? concatStream(llm, messages) : llm.invoke(messages)));
  const messages = [new HumanMessage(QUESTION)];
  for (let turn = 1; ; turn++) {
    assert.ok(turn <= 3, 'the loop does not end');
    const ai = await send(messages, turn);
    if (!ai.tool_calls?.length) return { answer: ai.content, toolArgs, turns: turn };
    messages.push(ai);
    for (const call of ai.tool_calls) {
      assert.equal(call.name, 'get_weather');
      // The documented way: invoking the tool with the tool call gives a ToolMessage.
      const toolMessage = await getWeather.invoke(call);
      assert.ok(toolMessage instanceof ToolMessage);
      assert.equal(toolMessage.tool_call_id, call.id);
      messages.push(toolMessage);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the OpenAI Agents SDK with its Chat Completions model

async function agentsLoop(scope, streaming) {
  const toolArgs = [];
  const getWeather = agentsTool({
    name: 'get_weather',
    description: 'The current weather in a city.',
    parameters: z.object({ city: z.string() }),
    execute: async (args) => {
      toolArgs.push(args);
      return TOOL_RESULT;
    },
  });
  // The scope reaches the mock through the OpenAI client the chat-completions model is built on.
  const client = openaiClient(scope);
  const agent = new Agent({
    name: 'Weather agent',
    instructions: 'Answer questions about the weather with the tool.',
    model: new OpenAIChatCompletionsModel(client, 'mock-tools'),
    tools: [getWeather],
  });
  return diagnosed(scope, 'run', async () => {
    if (!streaming) {
      const result = await run(agent, QUESTION);
      return { answer: result.finalOutput, toolArgs, items: result.newItems.map((i) => i.type) };
    }
    const result = await run(agent, QUESTION, { stream: true });
    let deltas = '';
    for await (const event of result) {
      if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') deltas += event.data.delta;
    }
    await result.completed;
    if (result.error) throw result.error;
    assert.equal(deltas, result.finalOutput, 'the streamed text is the final output');
    return { answer: result.finalOutput, toolArgs, items: result.newItems.map((i) => i.type) };
  });
}

// ---------------------------------------------------------------------------------------------

const CLIENTS = [
  ['openai', 'the official openai SDK', openaiLoop],
  ['langchain', '@langchain/openai ChatOpenAI with bindTools', langchainLoop],
  ['agents', '@openai/agents with OpenAIChatCompletionsModel', agentsLoop],
];

for (const [id, label, loop] of CLIENTS) {
  describe(`fixtures: ${label}`, () => {
    for (const streaming of [false, true]) {
      test(`two-turn agent loop on fixtures (streamed: ${streaming})`, { timeout: TIMEOUT }, async () => {
        const scope = newScope(id, streaming);
        await withScope(scope, weatherFixtures(), async () => {
          const out = await loop(scope, streaming);
          assert.deepEqual(out.toolArgs, [{ city: 'Paris' }], 'get_weather ran once, with the fixture\'s arguments');
          assert.equal(out.answer, ANSWER);
          if (out.turns !== undefined) assert.equal(out.turns, 2);
          if (out.items) assert.deepEqual(out.items, ['tool_call_item', 'tool_call_output_item', 'message_output_item']);
          await assertJournal(scope, streaming);
          // Both runtime fixtures matched once, in this scope.
          const listed = await control('GET', `/_mock/fixtures?scope=${encodeURIComponent(scope)}`);
          const hits = Object.fromEntries(listed.data.filter((f) => f.origin === 'runtime').map((f) => [f.name, f.hits]));
          assert.deepEqual(hits, { 'weather-call': 1, 'weather-answer': 1 }, JSON.stringify(listed));
        });
        // Dropped: the scope's journal went with it.
        assert.deepEqual(await journal(scope), []);
      });
    }
  });
}

describe('fixtures: scopes isolate concurrent tests', () => {
  test('two scopes at once, each with its own replies (openai SDK)', { timeout: TIMEOUT }, async () => {
    // The same fixture names in both scopes, different replies: each loop must see only its own.
    const cases = [
      { scope: newScope('openai-concurrent-a', false), streaming: false, city: 'Paris', answer: 'It is sunny in Paris.' },
      { scope: newScope('openai-concurrent-b', true), streaming: true, city: 'Oslo', answer: 'It is raining in Oslo.' },
    ];
    const results = await Promise.all(
      cases.map((c) =>
        withScope(c.scope, weatherFixtures(c), async () => {
          const out = await openaiLoop(c.scope, c.streaming);
          await assertJournal(c.scope, c.streaming);
          return out;
        }),
      ),
    );
    cases.forEach((c, i) => {
      assert.deepEqual(results[i].toolArgs, [{ city: c.city }], `scope ${c.scope} got another scope's tool call`);
      assert.equal(results[i].answer, c.answer, `scope ${c.scope} got another scope's answer`);
    });
  });
});
