// Agents that run many turns, written as their frameworks' docs write them, against mock-tools:
// each must reach its final answer, JSON and streamed, over Chat Completions and the Responses
// API (docs/protocol.md, "mock-tools plays a whole agent"). An agent that never ends fails here
// by its framework's own step limit, never by a timeout of ours.
//
//   - the OpenAI Agents SDK: a handoff to an agent with a tool of its own, a MemorySession over
//     two runs, an agent used as a tool, an input guardrail run by an agent;
//   - LangChain: createAgent with a tool, with a responseFormat (tool_choice "required" until
//     its extract tool is called), and LangGraph's prebuilt createReactAgent;
//   - the AI SDK: ToolLoopAgent, and one under toolChoice "required" that ends on a tool of its
//     own (hasToolCall).
//
// Run:  npm ci && MOCKGATEWAY_BASE_URL=http://127.0.0.1:8080/v1 node --test agentloops.test.mjs

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI from 'openai';
import {
  Agent, MemorySession, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, setTracingDisabled, tool as agentTool,
} from '@openai/agents';
import { createAgent, tool as lcTool } from 'langchain';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { ToolLoopAgent, hasToolCall, stepCountIs, tool as aiTool, jsonSchema } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';

const BASE_URL = process.env.MOCKGATEWAY_BASE_URL;
if (!BASE_URL) throw new Error('MOCKGATEWAY_BASE_URL is not set (e.g. http://127.0.0.1:8080/v1)');
const API_KEY = process.env.MOCKGATEWAY_API_KEY || 'dummy';
const TIMEOUT = 60_000;
const LEAD = 'Based on the tool result,';

// Traces would go to OpenAI's platform: nothing leaves the machine.
setTracingDisabled(true);

const dialects = ['chat', 'responses'];
const modes = [false, true]; // stream

// agentsModel is the Agents SDK's model of the dialect.
function agentsModel(dialect, id = 'mock-tools') {
  const client = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
  return dialect === 'chat' ? new OpenAIChatCompletionsModel(client, id) : new OpenAIResponsesModel(client, id);
}

// runAgent runs an agent to its end, streamed or not, with the SDK's own turn limit.
async function runAgent(agent, input, stream, options = {}) {
  if (!stream) return run(agent, input, { maxTurns: 8, ...options });
  const result = await run(agent, input, { maxTurns: 8, stream: true, ...options });
  for await (const _ of result) { /* read to the end */ }
  await result.completed;
  return result;
}

for (const dialect of dialects) {
  for (const stream of modes) {
    const how = `${dialect}${stream ? ', streamed' : ''}`;

    describe(`@openai/agents (${how})`, () => {
      test('a handoff reaches the receiving agent\'s tool, then its answer', { timeout: TIMEOUT }, async () => {
        const refunds = [];
        const issueRefund = agentTool({
          name: 'issue_refund', description: 'Issue a refund for an order.', parameters: z.object({ order_id: z.string() }),
          execute: async ({ order_id }) => { refunds.push(order_id); return 'Refund issued.'; },
        });
        const refundAgent = new Agent({ name: 'Refunds', instructions: 'Handle refunds.', model: agentsModel(dialect), tools: [issueRefund] });
        const triage = new Agent({ name: 'Triage', instructions: 'Route the user.', model: agentsModel(dialect), handoffs: [refundAgent] });
        const result = await runAgent(triage, 'I want a refund for order 42.', stream);
        assert.equal(result.lastAgent.name, 'Refunds');
        assert.equal(refunds.length, 1, 'the receiving agent called its own tool once');
        assert.ok(result.finalOutput.startsWith(LEAD), result.finalOutput);
      });

      test('a MemorySession keeps the conversation over two runs', { timeout: TIMEOUT }, async () => {
        const agent = new Agent({ name: 'Assistant', instructions: 'Be brief.', model: agentsModel(dialect, 'mock-chat') });
        const session = new MemorySession();
        const first = await runAgent(agent, 'Hello.', stream, { session });
        const second = await runAgent(agent, 'And again?', stream, { session });
        assert.ok(first.finalOutput.length > 0 && second.finalOutput.length > 0);
        assert.equal((await session.getItems()).length, 4, 'two questions and two answers');
      });

      test('an agent used as a tool', { timeout: TIMEOUT }, async () => {
        const translator = new Agent({ name: 'Translator', instructions: 'Translate to French.', model: agentsModel(dialect, 'mock-chat') });
        const orchestrator = new Agent({
          name: 'Orchestrator', instructions: 'Use the translator.', model: agentsModel(dialect),
          tools: [translator.asTool({ toolName: 'translate_to_french', toolDescription: 'Translate text to French.' })],
        });
        const result = await runAgent(orchestrator, 'Say hello in French.', stream);
        assert.equal(result.lastAgent.name, 'Orchestrator');
        assert.deepEqual(result.newItems.map((i) => i.type), ['tool_call_item', 'tool_call_output_item', 'message_output_item']);
        assert.ok(result.finalOutput.startsWith(LEAD), result.finalOutput);
      });

      test('an input guardrail run by an agent', { timeout: TIMEOUT }, async () => {
        const checker = new Agent({
          name: 'Checker', instructions: 'Is this about homework?', model: agentsModel(dialect, 'mock-chat'),
          outputType: z.object({ isHomework: z.boolean(), reasoning: z.string() }),
        });
        let checked;
        const guardrail = {
          name: 'homework',
          execute: async ({ input, context }) => {
            const r = await run(checker, input, { context });
            checked = r.finalOutput;
            return { outputInfo: r.finalOutput, tripwireTriggered: false };
          },
        };
        const agent = new Agent({ name: 'Tutor', instructions: 'Help.', model: agentsModel(dialect, 'mock-chat'), inputGuardrails: [guardrail] });
        const result = await runAgent(agent, 'What is 2 + 2?', stream);
        assert.equal(typeof checked.isHomework, 'boolean');
        assert.ok(result.finalOutput.length > 0);
      });
    });

    describe(`LangChain (${how})`, () => {
      const model = (extra = {}) => new ChatOpenAI({
        model: 'mock-tools', apiKey: API_KEY, maxRetries: 0, configuration: { baseURL: BASE_URL },
        useResponsesApi: dialect === 'responses', ...extra,
      });
      const calls = [];
      const getWeather = lcTool(async ({ city }) => { calls.push(city); return `It is sunny in ${city}.`; }, {
        name: 'get_weather', description: 'The current weather in a city.', schema: z.object({ city: z.string() }),
      });
      // finalState runs a LangGraph agent to its end: invoke, or stream of values.
      async function finalState(agent, stream) {
        const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };
        if (!stream) return agent.invoke(input, { recursionLimit: 12 });
        let last;
        for await (const state of await agent.stream(input, { recursionLimit: 12, streamMode: 'values' })) last = state;
        return last;
      }

      test('createAgent with a tool', { timeout: TIMEOUT }, async () => {
        calls.length = 0;
        const state = await finalState(createAgent({ model: model(), tools: [getWeather] }), stream);
        assert.equal(calls.length, 1);
        assert.ok(state.messages.at(-1).text.startsWith(LEAD), state.messages.at(-1).text);
      });

      test('createAgent with a responseFormat', { timeout: TIMEOUT }, async () => {
        calls.length = 0;
        // Over Chat Completions, one call a turn under tool_choice "required" until the extract
        // tool is called: the loop ends once mock-tools moves on to it. Over the Responses API
        // @langchain/openai 1.6.0 drops the tool_choice (its responses.js keeps only an object
        // form, and "required" formats to a string), so the agent runs under auto: with parallel
        // calls, mock-tools calls its tool and the extract tool on the first turn.
        const agent = createAgent({
          model: model(dialect === 'chat' ? { modelKwargs: { parallel_tool_calls: false } } : {}), tools: [getWeather],
          responseFormat: z.object({ summary: z.string() }),
        });
        const state = await finalState(agent, stream);
        assert.equal(typeof state.structuredResponse?.summary, 'string', JSON.stringify(state.structuredResponse));
      });

      test('LangGraph\'s prebuilt createReactAgent', { timeout: TIMEOUT }, async () => {
        calls.length = 0;
        const state = await finalState(createReactAgent({ llm: model(), tools: [getWeather] }), stream);
        assert.equal(calls.length, 1);
        assert.ok(state.messages.at(-1).text.startsWith(LEAD), state.messages.at(-1).text);
      });
    });

    describe(`AI SDK ToolLoopAgent (${how})`, () => {
      const provider = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
      const model = dialect === 'chat' ? provider.chat('mock-tools') : provider('mock-tools');
      const providerOptions = { openai: { store: false } };
      const weather = (calls) => aiTool({
        description: 'The current weather in a city.',
        inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
        execute: async ({ city }) => { calls.push(city); return `It is sunny in ${city}.`; },
      });
      async function answer(agent) {
        if (!stream) return agent.generate({ prompt: 'What is the weather in Paris?' });
        const r = await agent.stream({ prompt: 'What is the weather in Paris?' });
        for await (const _ of r.textStream) { /* read to the end */ }
        return { text: await r.text, steps: await r.steps };
      }

      test('a tool, then the answer', { timeout: TIMEOUT }, async () => {
        const calls = [];
        const agent = new ToolLoopAgent({ model, tools: { get_weather: weather(calls) }, stopWhen: stepCountIs(8), providerOptions });
        const r = await answer(agent);
        assert.equal(calls.length, 1);
        assert.equal(r.steps.length, 2);
        assert.ok(r.text.startsWith(LEAD), r.text);
      });

      test('toolChoice required, ended by a tool of its own', { timeout: TIMEOUT }, async () => {
        const calls = [];
        const agent = new ToolLoopAgent({
          model, toolChoice: 'required', stopWhen: [hasToolCall('done'), stepCountIs(8)],
          providerOptions: { openai: { store: false, parallelToolCalls: false } },
          tools: {
            get_weather: weather(calls),
            done: aiTool({ description: 'Call when finished.', inputSchema: jsonSchema({ type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] }) }),
          },
        });
        const r = await answer(agent);
        assert.equal(calls.length, 1);
        assert.deepEqual(r.steps.map((s) => s.toolCalls.map((c) => c.toolName)), [['get_weather'], ['done']]);
      });
    });
  }
}
