// Records the real /v1/responses request bodies of the Node clients installed here, for the
// Responses corpus (internal/server/testdata/responses-clients/<client>/<case>.json).
//
// It is a capture tool, not a test (node --test does not pick it up: the name does not end in
// .test.mjs). It starts a loopback HTTP server that records method, path, headers and body and
// answers canned, OpenAI-shaped Responses answers (JSON, or the SSE stream OpenAI sends: named
// events, sequence_number from 0, no [DONE]) good enough for each client to take its next step
// (a function_call when tools are offered and no function_call_output is in the input; a JSON
// instance of the schema under text.format json_schema; status "incomplete" under
// max_output_tokens), runs each library unmodified against it, and writes one corpus file per
// request.
//
// Run:  cd internal/clientcompat/node && node capture/responses-capture.mjs [outdir]
// (default outdir: ../../server/testdata/responses-clients). Nothing leaves the machine.
// node capture/responses-capture.mjs --serve [port] runs only the server and prints each request
// as a JSON line (used to record clients in other languages, e.g. openai-go).

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const nodeDir = path.resolve(here, '..');
const outDir = path.resolve(process.argv[2] || path.join(nodeDir, '../../server/testdata/responses-clients'));
const version = (p) => JSON.parse(fs.readFileSync(path.join(nodeDir, 'node_modules', p, 'package.json'), 'utf8')).version;

// ---------------------------------------------------------------------------------------------
// canned answers

let seq = 0;
const newID = (prefix) => `${prefix}_${(++seq).toString(16).padStart(8, '0')}cafe0000${'0'.repeat(24)}`;

// instance makes a small instance of a JSON schema (enough for the clients' validators).
function instance(schema, defs = {}, key = '') {
  if (!schema || typeof schema !== 'object') return 'x';
  if (schema.$defs) defs = { ...defs, ...schema.$defs };
  if (schema.definitions) defs = { ...defs, ...schema.definitions };
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop();
    return instance(defs[name], defs, key);
  }
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return instance(schema.anyOf.find((s) => s.type !== 'null') || schema.anyOf[0], defs, key);
  if (schema.oneOf) return instance(schema.oneOf[0], defs, key);
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') || type[0];
  if (!type && schema.properties) type = 'object';
  switch (type) {
    case 'object': {
      const out = {};
      for (const [k, v] of Object.entries(schema.properties || {})) out[k] = instance(v, defs, k);
      return out;
    }
    case 'array':
      return [instance(schema.items, defs, key)];
    case 'integer':
      return schema.minimum ?? 1;
    case 'number':
      return schema.minimum ?? 1.5;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return key === 'city' ? 'Paris' : key === 'country' ? 'FR' : 'Paris';
  }
}

function usage(inp, out) {
  return {
    input_tokens: inp,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: out,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inp + out,
  };
}

// answer decides what the canned model answers to a Responses request body.
function answer(body) {
  const input = Array.isArray(body.input) ? body.input : [];
  const hasOutput = input.some((i) => i && i.type === 'function_call_output');
  const fnTools = (body.tools || []).filter((t) => t.type === 'function');
  const fmt = body.text && body.text.format;
  if (fnTools.length && !hasOutput) {
    const t = fnTools[0];
    return { kind: 'call', name: t.name, args: JSON.stringify(instance(t.parameters)) };
  }
  if (fmt && fmt.type === 'json_schema') {
    return { kind: 'text', pieces: tokens(JSON.stringify(instance(fmt.schema))) };
  }
  if (fmt && fmt.type === 'json_object') return { kind: 'text', pieces: tokens('{"answer":"Paris"}') };
  const text = hasOutput ? 'Based on the tool result, it is sunny in Paris.' : 'Hello! This is a canned answer from the capture server.';
  return { kind: 'text', pieces: tokens(text) };
}

function tokens(text) {
  return text.match(/\s*\S+/g) || [text];
}

function baseResponse(body, status) {
  return {
    id: newID('resp'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: (body.text && body.text.format) || { type: 'text' }, verbosity: 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools || [],
    top_logprobs: 0,
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: null,
    user: null,
    metadata: body.metadata || {},
  };
}

// build returns the final response and the item list with the pieces for streaming.
function build(body) {
  const a = answer(body);
  let status = 'completed';
  let incomplete = null;
  const items = [];
  let outTokens = 0;
  if (a.kind === 'call') {
    const item = { id: newID('fc'), type: 'function_call', status: 'completed', arguments: a.args, call_id: newID('call'), name: a.name };
    items.push({ item, pieces: a.args.match(/"[^"]*"|[{}\[\],:]|[^"{}\[\],:]+/g) });
    outTokens = items[0].pieces.length;
  } else {
    let pieces = a.pieces;
    if (body.max_output_tokens && pieces.length > body.max_output_tokens) {
      pieces = pieces.slice(0, body.max_output_tokens);
      status = 'incomplete';
      incomplete = { reason: 'max_output_tokens' };
    }
    const text = pieces.join('');
    const item = {
      id: newID('msg'),
      type: 'message',
      status: status === 'completed' ? 'completed' : 'incomplete',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
      role: 'assistant',
    };
    items.push({ item, pieces });
    outTokens = pieces.length;
  }
  const resp = baseResponse(body, status);
  resp.incomplete_details = incomplete;
  resp.output = items.map((i) => i.item);
  resp.usage = usage(20, outTokens);
  return { resp, items };
}

function sendJSON(res, code, obj) {
  const b = JSON.stringify(obj);
  res.writeHead(code, { 'content-type': 'application/json', 'x-request-id': newID('req'), 'openai-version': '2020-10-01' });
  res.end(b);
}

function sendStream(res, body) {
  const { resp, items } = build(body);
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': newID('req'), 'openai-version': '2020-10-01' });
  let n = 0;
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n++, ...data })}\n\n`);
  const inProgress = { ...resp, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  ev('response.created', { response: inProgress });
  ev('response.in_progress', { response: inProgress });
  items.forEach(({ item, pieces }, output_index) => {
    if (item.type === 'function_call') {
      ev('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      for (const delta of pieces) ev('response.function_call_arguments.delta', { item_id: item.id, output_index, delta, obfuscation: 'x' });
      ev('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: item.arguments });
      ev('response.output_item.done', { output_index, item });
      return;
    }
    ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
    const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
    ev('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part });
    for (const delta of pieces) ev('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta, logprobs: [], obfuscation: 'x' });
    const text = item.content[0].text;
    ev('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text, logprobs: [] });
    ev('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: { ...part, text } });
    ev('response.output_item.done', { output_index, item });
  });
  ev(resp.status === 'completed' ? 'response.completed' : 'response.incomplete', { response: resp });
  res.end();
}

const DROP = new Set(['host', 'connection', 'content-length', 'authorization']);
let captured = [];

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    const headers = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const k = req.rawHeaders[i].toLowerCase();
      if (!DROP.has(k)) headers[k] = req.rawHeaders[i + 1];
    }
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = raw;
    }
    captured.push({ method: req.method, path: req.url, headers, body });
    if (req.method !== 'POST' || !req.url.startsWith('/v1/responses')) {
      return sendJSON(res, 404, { error: { message: 'capture server: only POST /v1/responses', type: 'invalid_request_error', param: null, code: 'not_found' } });
    }
    if (body && body.stream) return sendStream(res, body);
    return sendJSON(res, 200, build(body).resp);
  });
});

// --serve: only the capture server, on 127.0.0.1:<port> (0: any), for clients in other languages;
// each request is printed to stdout as one JSON line {method, path, headers, body}.
const serveAt = process.argv.indexOf('--serve');
if (serveAt >= 0) {
  const port = Number(process.argv[serveAt + 1] || 0);
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  console.error(`capture server on http://127.0.0.1:${server.address().port}/v1`);
  const orig = captured.push.bind(captured);
  captured.push = (rec) => {
    process.stdout.write(JSON.stringify(rec) + '\n');
    return orig(rec);
  };
  await new Promise(() => {});
}
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const BASE_URL = `http://127.0.0.1:${server.address().port}/v1`;
const API_KEY = 'dummy';
process.env.OPENAI_API_KEY = API_KEY;

// ---------------------------------------------------------------------------------------------
// scenarios

const { default: OpenAI } = await import('openai');
const { zodTextFormat } = await import('openai/helpers/zod');
const { z } = await import('zod');
const agents = await import('@openai/agents');
const { ChatOpenAI } = await import('@langchain/openai');
const { HumanMessage } = await import('@langchain/core/messages');
const lcTools = await import('@langchain/core/tools');
const { createOpenAI } = await import('@ai-sdk/openai');
const ai = await import('ai');

agents.setTracingDisabled(true);

const WEATHER_PARAMS = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const WEATHER_TOOL = { type: 'function', name: 'get_weather', description: 'Get the current weather in a city.', parameters: WEATHER_PARAMS, strict: true };
const CITY_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer' }, landmarks: { type: 'array', items: { type: 'string' } } },
  required: ['city', 'population', 'landmarks'],
  additionalProperties: false,
};
const City = z.object({ city: z.string(), population: z.number().int(), landmarks: z.array(z.string()) });

const oai = () => new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
agents.setDefaultOpenAIClient(oai());
agents.setOpenAIAPI('responses');

const ON_WIRE =
  `Recorded by running the library unmodified on Node ${process.version} against a loopback capture server ` +
  '(internal/clientcompat/node/capture/responses-capture.mjs) that answers canned OpenAI-shaped Responses answers; ' +
  'headers are exactly the ones on the wire (lower-cased), minus host, connection, content-length and the dummy Authorization. ' +
  'x-stainless-runtime-version and the Node part of a User-Agent are the recording machine\'s.';

const OPENAI_NODE = { dir: 'openai-node', client: 'OpenAI Node SDK (openai)', package: 'openai', version: version('openai') };
const AGENTS = {
  dir: 'openai-agents-js',
  client: 'OpenAI Agents SDK JS (@openai/agents, default OpenAIResponsesModel)',
  package: '@openai/agents',
  version: version('@openai/agents'),
};
const LANGCHAIN = { dir: 'langchain-js', client: 'LangChain JS (@langchain/openai ChatOpenAI, useResponsesApi: true)', package: '@langchain/openai', version: version('@langchain/openai') };
const AISDK = { dir: 'vercel-ai-sdk', client: 'Vercel AI SDK (ai + @ai-sdk/openai, responses model)', package: '@ai-sdk/openai', version: version('@ai-sdk/openai') };

const scenarios = [
  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/resources/responses/responses.ts (Responses.create)',
    cases: ['text'],
    notes: 'client.responses.create({model, input: string, instructions}). Only what the caller set is sent.',
    run: async () => oai().responses.create({ model: 'mock-chat', instructions: 'You are a helpful assistant.', input: 'Tell me about Paris.' }),
  },
  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/resources/responses/responses.ts (Responses.create, stream: true)',
    cases: ['stream'],
    notes: 'client.responses.create({..., stream: true}) with a message list input (EasyInputMessage: {role, content}, no type).',
    run: async () => {
      const s = await oai().responses.create({
        model: 'mock-chat',
        input: [
          { role: 'developer', content: 'Be brief.' },
          { role: 'user', content: 'Tell me about Paris.' },
        ],
        stream: true,
      });
      for await (const _ of s);
    },
  },
  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/resources/responses/responses.ts (Responses.create)',
    cases: ['tools', 'tool_round_trip'],
    notes:
      'The documented function-calling loop: first request with a flat function tool {type, name, description, parameters, strict}; the second sends the whole input again: the user message, the function_call item exactly as the response gave it (input.push(...response.output): id "fc_…", type, status "completed", arguments, call_id, name), then {type: "function_call_output", call_id, output}. tool_choice "auto" set by the caller.',
    run: async () => {
      const c = oai();
      const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
      const r = await c.responses.create({ model: 'mock-tools', input, tools: [WEATHER_TOOL], tool_choice: 'auto' });
      input.push(...r.output);
      for (const item of r.output) {
        if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: JSON.stringify({ temperature: 21, unit: 'celsius' }) });
      }
      await c.responses.create({ model: 'mock-tools', input, tools: [WEATHER_TOOL], tool_choice: 'auto' });
    },
  },
  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/resources/responses/responses.ts (Responses.create, text.format json_schema)',
    cases: ['json_schema'],
    notes: 'Structured output through text.format {type: "json_schema", name, schema, strict}: no response_format in the Responses API.',
    run: async () =>
      oai().responses.create({
        model: 'mock-chat',
        input: 'Describe Paris as JSON.',
        text: { format: { type: 'json_schema', name: 'city', schema: CITY_SCHEMA, strict: true } },
      }),
  },
  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/lib/ResponsesParser.ts, helpers/zod.ts (zodTextFormat)',
    cases: ['parse_zod'],
    notes:
      'client.responses.parse({text: {format: zodTextFormat(City, "city")}}): the helper sends text.format {type: "json_schema", name, strict: true, schema} with the zod-made schema ($schema-free, additionalProperties false, every property required); the parse step happens in the client.',
    run: async () => oai().responses.parse({ model: 'mock-chat', input: 'Describe Paris as JSON.', text: { format: zodTextFormat(City, 'city') } }),
  },
  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/resources/responses/responses.ts (Responses.create)',
    cases: ['max_output_tokens'],
    notes: 'max_output_tokens: 16 (16 is the API\'s documented minimum); the answer is status "incomplete", incomplete_details.reason "max_output_tokens".',
    run: async () => oai().responses.create({ model: 'mock-chat', input: 'Tell me a long story about Paris and its many bridges over the Seine.', max_output_tokens: 16 }),
  },
  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/lib/responses/ResponseStream.ts (Responses.stream)',
    cases: ['stream_helper'],
    notes: 'client.responses.stream({...}) is create() with stream: true added by the helper (ResponseStream.createResponse); the body is otherwise what the caller set.',
    run: async () => {
      const s = oai().responses.stream({ model: 'mock-chat', input: 'Tell me about Paris.' });
      await s.finalResponse();
    },
  },

  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/resources/responses/responses.ts (Responses.create)',
    cases: ['multi_turn'],
    notes:
      'A stateless conversation as the guide writes it: input = [...input, ...response.output, {role: "user", content}]. The assistant message goes back exactly as the API gave it: {id: "msg_…", type: "message", status: "completed", content: [{type: "output_text", annotations: [], logprobs: [], text}], role: "assistant"}.',
    run: async () => {
      const c = oai();
      let input = [{ role: 'user', content: 'Tell me about Paris.' }];
      const r = await c.responses.create({ model: 'mock-chat', input, store: false });
      input = [...input, ...r.output, { role: 'user', content: 'And about Lyon?' }];
      await c.responses.create({ model: 'mock-chat', input, store: false });
    },
    only: 1,
  },
  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/resources/responses/responses.ts (Responses.create, previous_response_id)',
    cases: ['previous_response_id'],
    notes:
      'The documented server-side conversation state: the second turn sends only the new input and previous_response_id of the first answer. The mock keeps no state.',
    expect: {
      status: 400,
      code: 'unsupported_parameter',
      param: 'previous_response_id',
      why: 'Not a rejection by the real API (it looks the stored response up): the mock is stateless by design and answers previous_response_id with unsupported_parameter; the client must send the whole input.',
    },
    run: async () => {
      const c = oai();
      const r = await c.responses.create({ model: 'mock-chat', input: 'Tell me about Paris.' });
      await c.responses.create({ model: 'mock-chat', input: [{ role: 'user', content: 'And about Lyon?' }], previous_response_id: r.id });
    },
    only: 1,
  },

  {
    who: OPENAI_NODE,
    source: 'openai/openai-node: src/lib/responses/ResponseStream.ts (finalResponse → maybeParseResponse), src/lib/ResponsesParser.ts',
    cases: ['stream_helper_tools', 'stream_helper_tool_round_trip'],
    notes:
      'The function-calling loop with client.responses.stream(...).finalResponse(): the helper returns a ParsedResponse whose function_call items carry an extra enumerable parsed_arguments (the parsed JSON arguments for a strict: true or zodFunction tool, as here; null otherwise; message output_text parts likewise get parsed), so input.push(...final.output) sends parsed_arguments back. The openai-node SDK strips nothing on the way out; openai-python excludes parsed_arguments when re-serialising (__api_exclude__, commit 60ec9dfe "fix(responses): don\'t include parsed_arguments when re-serialising") because the API answered 400 "Unknown parameter: \'input[2].parsed_arguments\'" (openai/openai-python#2720).',
    expectFor: {
      stream_helper_tool_round_trip: {
        status: 400,
        code: 'unknown_parameter',
        param: 'input[1].parsed_arguments',
        why: 'The OpenAI API rejects parsed_arguments in an input function_call item: 400 unknown_parameter "Unknown parameter: \'input[2].parsed_arguments\'" (openai/openai-python#2720; openai-python strips it since 60ec9dfe).',
      },
    },
    run: async () => {
      const c = oai();
      const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
      const first = await c.responses.stream({ model: 'mock-tools', input, tools: [WEATHER_TOOL] }).finalResponse();
      const call = first.output.find((i) => i.type === 'function_call');
      input.push(...first.output, { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' });
      await c.responses.stream({ model: 'mock-tools', input, tools: [WEATHER_TOOL] }).finalResponse();
    },
  },

  // @openai/agents, default model (OpenAIResponsesModel) -----------------------------------------
  {
    who: AGENTS,
    source: 'openai/openai-agents-js: packages/agents-openai/src/openaiResponsesModel.ts (#buildResponsesCreateRequest), openaiResponsesConverter.ts',
    cases: ['text'],
    notes: 'new Agent({name, instructions, model: "mock-chat"}) and run(agent, "..."), with setDefaultOpenAIClient(new OpenAI({baseURL, apiKey})) (the top-level openai package) and setOpenAIAPI("responses") (the default).',
    run: async () => agents.run(new agents.Agent({ name: 'Assistant', instructions: 'You are a helpful assistant.', model: 'mock-chat' }), 'Tell me about Paris.'),
  },
  {
    who: AGENTS,
    source: 'openai/openai-agents-js: packages/agents-openai/src/openaiResponsesModel.ts (#buildResponsesCreateRequest, getToolChoice, converTool), openaiResponsesConverter.ts',
    cases: ['tools', 'tool_round_trip'],
    notes: 'One run of an agent with a zod function tool (tool({name, description, parameters: z.object(...), execute})): the model calls it, the runner executes it and sends the whole history again (stateless: no previous_response_id unless the caller asks for it).',
    run: async () => {
      const getWeather = agents.tool({
        name: 'get_weather',
        description: 'Get the current weather in a city.',
        parameters: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
        execute: async ({ city }) => `It is sunny in ${city}.`,
      });
      return agents.run(new agents.Agent({ name: 'Weather agent', instructions: 'Answer questions about the weather with the tool.', model: 'mock-tools', tools: [getWeather] }), 'What is the weather in Paris?');
    },
  },
  {
    who: AGENTS,
    source: 'openai/openai-agents-js: packages/agents-openai/src/openaiResponsesModel.ts (getStreamedResponse), openaiResponsesConverter.ts',
    cases: ['stream_tools', 'stream_tool_round_trip'],
    notes: 'The same tool loop with run(agent, input, {stream: true}): both requests stream.',
    run: async () => {
      const getWeather = agents.tool({
        name: 'get_weather',
        description: 'Get the current weather in a city.',
        parameters: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
        execute: async ({ city }) => `It is sunny in ${city}.`,
      });
      const r = await agents.run(
        new agents.Agent({ name: 'Weather agent', instructions: 'Answer questions about the weather with the tool.', model: 'mock-tools', tools: [getWeather] }),
        'What is the weather in Paris?',
        { stream: true },
      );
      for await (const _ of r);
      await r.completed;
    },
  },
  {
    who: AGENTS,
    source: 'openai/openai-agents-js: packages/agents-openai/src/openaiResponsesModel.ts (getResponseFormat)',
    cases: ['output_type'],
    notes: 'new Agent({outputType: z.object(...)}): text.format {type: "json_schema", name: "final_output", strict: true, schema}.',
    run: async () => agents.run(new agents.Agent({ name: 'City agent', instructions: 'Describe the city.', model: 'mock-chat', outputType: City }), 'Describe Paris.'),
  },

  {
    who: AGENTS,
    source: 'openai/openai-agents-js: packages/agents-openai/src/openaiResponsesModel.ts (#buildResponsesCreateRequest), openaiResponsesConverter.ts',
    cases: ['multi_turn'],
    notes: 'A second turn built as the docs write it: run(agent, [...firstResult.history, {role: "user", content: "..."}]); the earlier assistant answer goes back as a message item with id, type, role, content [{type: "output_text", text, annotations, logprobs}] and status.',
    run: async () => {
      const agent = new agents.Agent({ name: 'Assistant', instructions: 'You are a helpful assistant.', model: 'mock-chat' });
      const first = await agents.run(agent, 'Tell me about Paris.');
      await agents.run(agent, [...first.history, { role: 'user', content: 'And about Lyon?' }]);
    },
    only: 1,
  },
  {
    who: AGENTS,
    source: 'openai/openai-agents-js: packages/agents-openai/src/openaiResponsesModel.ts (#buildResponsesCreateRequest: modelSettings → body)',
    cases: ['model_settings'],
    notes: 'modelSettings {temperature, topP, maxTokens, truncation: "auto", store: false, parallelToolCalls: true, toolChoice: "auto", text: {verbosity: "low"}, promptCacheRetention: "24h"} with a tool: how each setting is spelled on the wire (text.verbosity without a format; toolChoice "auto" is not sent by the SDK).',
    run: async () => {
      const getWeather = agents.tool({
        name: 'get_weather',
        description: 'Get the current weather in a city.',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => `It is sunny in ${city}.`,
      });
      const agent = new agents.Agent({
        name: 'Weather agent',
        instructions: 'Answer questions about the weather with the tool.',
        model: 'mock-tools',
        tools: [getWeather],
        modelSettings: { temperature: 0.2, topP: 0.9, maxTokens: 256, truncation: 'auto', store: false, parallelToolCalls: true, toolChoice: 'auto', text: { verbosity: 'low' }, promptCacheRetention: '24h' },
      });
      await agents.run(agent, 'What is the weather in Paris?');
    },
    only: 1,
  },

  // LangChain JS, useResponsesApi -----------------------------------------------------------------
  {
    who: LANGCHAIN,
    source: 'langchain-ai/langchainjs: libs/langchain-openai/src/chat_models/responses.ts (ChatOpenAIResponses.invocationParams), src/converters/responses.ts (convertMessagesToResponsesInput)',
    cases: ['tools', 'tool_round_trip'],
    notes: 'new ChatOpenAI({model, useResponsesApi: true, configuration: {baseURL}}).bindTools([tool]).invoke(...), then tool.invoke(ai.tool_calls[0]) → ToolMessage, and invoke([human, ai, toolMessage]) as LangChain documents the loop.',
    run: async () => {
      const getWeather = lcTools.tool(async ({ city }) => `It is sunny in ${city}.`, {
        name: 'get_weather',
        description: 'Get the current weather in a city.',
        schema: z.object({ city: z.string().describe('The city') }),
      });
      const llm = new ChatOpenAI({ model: 'mock-tools', apiKey: API_KEY, useResponsesApi: true, maxRetries: 0, configuration: { baseURL: BASE_URL } }).bindTools([getWeather]);
      const human = new HumanMessage('What is the weather in Paris?');
      const aiMsg = await llm.invoke([human]);
      const toolMsg = await getWeather.invoke(aiMsg.tool_calls[0]);
      await llm.invoke([human, aiMsg, toolMsg]);
    },
  },
  {
    who: LANGCHAIN,
    source: 'langchain-ai/langchainjs: libs/langchain-openai/src/chat_models/responses.ts (_streamResponseChunks)',
    cases: ['stream'],
    notes: 'new ChatOpenAI({model, useResponsesApi: true}).stream("...").',
    run: async () => {
      const llm = new ChatOpenAI({ model: 'mock-chat', apiKey: API_KEY, useResponsesApi: true, maxRetries: 0, configuration: { baseURL: BASE_URL } });
      for await (const _ of await llm.stream('Tell me about Paris.'));
    },
  },

  {
    who: LANGCHAIN,
    source: 'langchain-ai/langchainjs: libs/langchain-openai/src/converters/responses.ts (convertMessagesToResponsesInput: AIMessage → message item)',
    cases: ['multi_turn'],
    notes: 'invoke([human, aiMessageFromFirstTurn, human2]): how LangChain sends an earlier assistant answer back in Responses mode.',
    run: async () => {
      const llm = new ChatOpenAI({ model: 'mock-chat', apiKey: API_KEY, useResponsesApi: true, maxRetries: 0, configuration: { baseURL: BASE_URL } });
      const human = new HumanMessage('Tell me about Paris.');
      const first = await llm.invoke([human]);
      await llm.invoke([human, first, new HumanMessage('And about Lyon?')]);
    },
    only: 1,
  },

  // AI SDK ---------------------------------------------------------------------------------------
  {
    who: AISDK,
    source: 'vercel/ai: packages/openai/src/responses/openai-responses-language-model.ts (getArgs), convert-to-openai-responses-input.ts',
    cases: ['text'],
    notes: 'createOpenAI({baseURL, apiKey}) then provider("mock-chat") (Responses by default in @ai-sdk/openai 3.x); generateText({model, system, prompt}).',
    run: async () => {
      const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
      return ai.generateText({ model: provider('mock-chat'), system: 'You are a helpful assistant.', prompt: 'Tell me about Paris.' });
    },
  },
  {
    who: AISDK,
    source: 'vercel/ai: packages/openai/src/responses/openai-responses-language-model.ts, convert-to-openai-responses-input.ts, openai-responses-prepare-tools.ts',
    cases: ['tools', 'tool_round_trip'],
    notes: 'generateText({model: provider("mock-tools"), tools: {get_weather: tool({inputSchema: z.object(...), execute})}, stopWhen: stepCountIs(3)}): the second step sends the earlier function call back and the function_call_output.',
    run: async () => {
      const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
      return ai.generateText({
        model: provider('mock-tools'),
        prompt: 'What is the weather in Paris?',
        tools: {
          get_weather: ai.tool({
            description: 'Get the current weather in a city.',
            inputSchema: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
            execute: async ({ city }) => ({ city, temperature: 21, unit: 'celsius' }),
          }),
        },
        stopWhen: ai.stepCountIs(3),
      });
    },
  },
  {
    who: AISDK,
    source: 'vercel/ai: packages/openai/src/responses/openai-responses-language-model.ts (doStream)',
    cases: ['stream'],
    notes: 'streamText({model: provider("mock-chat"), prompt}).',
    run: async () => {
      const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
      const r = ai.streamText({ model: provider('mock-chat'), prompt: 'Tell me about Paris.' });
      for await (const _ of r.textStream);
    },
  },
  {
    who: AISDK,
    source: 'vercel/ai: packages/openai/src/responses/openai-responses-language-model.ts (getArgs: responseFormat → text.format)',
    cases: ['structured_output_generate_object'],
    notes: 'generateObject({model: provider("mock-chat"), schema: z.object(...)}).',
    run: async () => {
      const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
      return ai.generateObject({ model: provider('mock-chat'), schema: City, prompt: 'Describe Paris.' });
    },
  },
  {
    who: AISDK,
    source: 'vercel/ai: packages/openai/src/responses/openai-responses-language-model.ts (getArgs: responseFormat → text.format)',
    cases: ['structured_output'],
    notes: 'generateText({model: provider("mock-chat"), output: Output.object({schema: z.object(...)})}).',
    run: async () => {
      const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
      return ai.generateText({ model: provider('mock-chat'), output: ai.Output.object({ schema: City }), prompt: 'Describe Paris.' });
    },
  },
  {
    who: AISDK,
    source: 'vercel/ai: packages/openai/src/responses/convert-to-openai-responses-input.ts (assistant text part with providerOptions.openai.itemId, store true → item_reference)',
    cases: ['multi_turn_item_reference'],
    notes: 'A second turn built from the first result: generateText({messages: [user, ...first.response.messages, user2]}). With store unset (true by default at the API) the earlier assistant text, which carries providerOptions.openai.itemId, goes as {type: "item_reference", id: "msg_…"}: only the API\'s store can resolve it.',
    run: async () => {
      const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
      const user = { role: 'user', content: 'Tell me about Paris.' };
      const first = await ai.generateText({ model: provider('mock-chat'), messages: [user] });
      await ai.generateText({ model: provider('mock-chat'), messages: [user, ...first.response.messages, { role: 'user', content: 'And about Lyon?' }] });
    },
    only: 1,
  },
  {
    who: AISDK,
    source: 'vercel/ai: packages/openai/src/responses/convert-to-openai-responses-input.ts (store false: the assistant text goes with its content and id)',
    cases: ['multi_turn_store_false'],
    notes: 'The same second turn with providerOptions: {openai: {store: false}}: store: false in the body and the earlier assistant text as {role: "assistant", content: [{type: "output_text", text}], id: "msg_…"} (no type, no status, no annotations).',
    run: async () => {
      const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
      const user = { role: 'user', content: 'Tell me about Paris.' };
      const providerOptions = { openai: { store: false } };
      const first = await ai.generateText({ model: provider('mock-chat'), messages: [user], providerOptions });
      await ai.generateText({ model: provider('mock-chat'), messages: [user, ...first.response.messages, { role: 'user', content: 'And about Lyon?' }], providerOptions });
    },
    only: 1,
  },
];

// surprises lists what a body carries that a strict decoder might not expect.
function surprises(b) {
  const out = [];
  const has = (k) => b && Object.prototype.hasOwnProperty.call(b, k);
  if (has('include')) out.push(`include: ${JSON.stringify(b.include)}`);
  if (has('tools') && Array.isArray(b.tools) && b.tools.length === 0) out.push('tools: [] (empty)');
  if (has('stream') && b.stream === false) out.push('stream: false sent explicitly');
  for (const [i, it] of (Array.isArray(b.input) ? b.input : []).entries()) {
    if (it && 'parsed_arguments' in it) out.push(`input[${i}].parsed_arguments: ${JSON.stringify(it.parsed_arguments)}`);
    for (const [j, c] of (Array.isArray(it && it.content) ? it.content : []).entries()) if (c && 'parsed' in c) out.push(`input[${i}].content[${j}].parsed`);
  }
  for (const k of ['store', 'truncation', 'prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'reasoning', 'stream_options', 'parallel_tool_calls', 'temperature', 'top_p', 'max_output_tokens', 'metadata', 'service_tier', 'user', 'safety_identifier', 'context_management', 'conversation', 'previous_response_id', 'prompt']) {
    if (has(k)) out.push(`${k}: ${JSON.stringify(b[k])}`);
  }
  if (has('text')) {
    if (b.text && Object.keys(b.text).length === 0) out.push('text: {} (empty, no format)');
    if (b.text && b.text.verbosity) out.push(`text.verbosity: ${JSON.stringify(b.text.verbosity)}`);
  }
  for (const [i, t] of (b.tools || []).entries()) {
    if (t.strict === null) out.push(`tools[${i}].strict: null`);
    if (!('strict' in t)) out.push(`tools[${i}] without strict`);
    if (t.parameters && t.parameters.$schema) out.push(`tools[${i}].parameters.$schema: ${t.parameters.$schema}`);
  }
  const sch = b.text && b.text.format && b.text.format.schema;
  if (sch && sch.$schema) out.push(`text.format.schema.$schema: ${sch.$schema}`);
  if (sch && JSON.stringify(sch).includes('9007199254740991')) out.push('text.format.schema integer minimum/maximum ±9007199254740991 (zod 4 int)');
  if (typeof b.input === 'string') out.push('input is a string');
  for (const [i, it] of (Array.isArray(b.input) ? b.input : []).entries()) {
    const keys = Object.keys(it);
    if (it.type === 'item_reference') out.push(`input[${i}]: item_reference {type, id}`);
    else if (it.type === 'function_call') out.push(`input[${i}]: function_call {${keys.join(', ')}}`);
    else if (it.type === 'function_call_output') out.push(`input[${i}]: function_call_output {${keys.join(', ')}}`);
    else if (it.role) {
      const parts = Array.isArray(it.content) ? it.content.map((c) => `{${Object.keys(c).join(', ')}}`).join(' ') : 'string';
      out.push(`input[${i}]: ${it.role} message {${keys.join(', ')}}, content ${parts}`);
    }
  }
  return out.length ? ` On the wire: ${out.join('; ')}.` : '';
}

const only = process.env.CAPTURE_ONLY;
let failures = 0;
const written = [];
for (const sc of scenarios) {
  if (only && !sc.who.dir.includes(only)) continue;
  if (sc.setup) sc.setup();
  captured = [];
  try {
    await sc.run();
  } catch (err) {
    failures++;
    console.error(`${sc.who.dir} ${sc.cases.join(',')}: the client failed: ${err.stack || err}`);
  }
  const reqs = captured.filter((c) => c.path.startsWith('/v1/responses'));
  const reqsAll = reqs.length;
  if (sc.only) reqs.splice(0, reqs.length - sc.only);
  if (reqs.length !== sc.cases.length) {
    failures++;
    console.error(`${sc.who.dir} ${sc.cases.join(',')}: ${reqs.length} request(s) captured, want ${sc.cases.length}: ${captured.map((c) => c.method + ' ' + c.path).join(', ')}`);
  }
  reqs.slice(0, sc.cases.length).forEach((r, i) => {
    const n = sc.only ? `request ${reqsAll} of ${reqsAll} of the scenario (the earlier one(s) only set it up)` : `request ${i + 1} of ${sc.cases.length}`;
    const name = sc.cases[i];
    const entry = {
      client: sc.who.client,
      package: sc.who.package,
      version: sc.who.version,
      source: sc.source,
      case: name,
      notes: `${sc.notes} This is ${n}.${surprises(r.body)} ${ON_WIRE}`,
      headers: r.headers,
      ...(sc.expect ? { expect: sc.expect } : {}),
      ...(sc.expectFor && sc.expectFor[name] ? { expect: sc.expectFor[name] } : {}),
      body: r.body,
    };
    const dir = path.join(outDir, sc.who.dir);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify(entry, null, 2) + '\n');
    written.push(path.relative(process.cwd(), file));
  });
}
server.close();
console.log(written.join('\n'));
if (failures) {
  console.error(`${failures} scenario(s) failed`);
  process.exitCode = 1;
}
process.exit();
