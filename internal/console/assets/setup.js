// setup.js: how to connect (base URL, key, client snippets), what the mock serves (models from
// /v1/models, the metadata-only count from /health, fixtures from /_mock/fixtures), and a test
// request whose call arrives in the table below it.

import { $, el, row, fill, setText, copy } from './dom.js';
import { getJSON, post, ApiError } from './api.js';
import { compactRow, RowCache, journalPath } from './calls.js';

const KEY_ENV = 'MOCKGATEWAY_API_KEY';

// snippets are the copy-ready clients; base is the /v1 base URL, keyRequired whether the mock
// checks a key (the key itself is never put in a snippet: they read it from the environment).
const snippets = {
  curl: (base, keyRequired) => [
    `curl -s ${base}/chat/completions \\`,
    `  -H 'Content-Type: application/json' \\`,
    keyRequired ? `  -H "Authorization: Bearer $${KEY_ENV}" \\` : `  -H 'Authorization: Bearer mock' \\`,
    `  -d '{"model":"mock-chat","messages":[{"role":"user","content":"Hello"}]}'`,
  ].join('\n'),
  Python: (base, keyRequired) => [
    ...(keyRequired ? ['import os'] : []),
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url="${base}", api_key=${keyRequired ? `os.environ["${KEY_ENV}"]` : '"mock"'})`,
    'resp = client.chat.completions.create(',
    '    model="mock-chat",',
    '    messages=[{"role": "user", "content": "Hello"}],',
    ')',
    'print(resp.choices[0].message.content)',
  ].join('\n'),
  Node: (base, keyRequired) => [
    '// hello.mjs',
    'import OpenAI from "openai";',
    '',
    `const client = new OpenAI({ baseURL: "${base}", apiKey: ${keyRequired ? `process.env.${KEY_ENV}` : '"mock"'} });`,
    'const resp = await client.chat.completions.create({',
    '  model: "mock-chat",',
    '  messages: [{ role: "user", content: "Hello" }],',
    '});',
    'console.log(resp.choices[0].message.content);',
  ].join('\n'),
  Go: (base, keyRequired) => [
    'package main',
    '',
    'import (',
    '\t"context"',
    '\t"fmt"',
    '\t"log"',
    ...(keyRequired ? ['\t"os"'] : []),
    '',
    '\t"github.com/openai/openai-go/v3"',
    '\t"github.com/openai/openai-go/v3/option"',
    ')',
    '',
    'func main() {',
    '\tclient := openai.NewClient(',
    `\t\toption.WithBaseURL("${base}/"),`,
    `\t\toption.WithAPIKey(${keyRequired ? `os.Getenv("${KEY_ENV}")` : '"mock"'}),`,
    '\t)',
    '\tresp, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{',
    '\t\tModel:    "mock-chat",',
    '\t\tMessages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},',
    '\t})',
    '\tif err != nil {',
    '\t\tlog.Fatal(err)',
    '\t}',
    '\tfmt.Println(resp.Choices[0].Message.Content)',
    '}',
  ].join('\n'),
  'Vercel AI SDK': (base, keyRequired) => [
    '// hello.mjs — mock("…") uses the Responses API (the default), mock.chat("…") Chat Completions: the mock serves both',
    'import { createOpenAI } from "@ai-sdk/openai";',
    'import { generateText } from "ai";',
    '',
    `const mock = createOpenAI({ baseURL: "${base}", apiKey: ${keyRequired ? `process.env.${KEY_ENV}` : '"mock"'} });`,
    'const { text } = await generateText({ model: mock("mock-chat"), prompt: "Hello" });',
    'console.log(text);',
  ].join('\n'),
  'Claude Code': (base, keyRequired) => [
    '# Claude Code, and every Anthropic client (SDKs, @ai-sdk/anthropic, ChatAnthropic): the root URL, no /v1',
    `export ANTHROPIC_BASE_URL=${base.replace(/\/v1$/, '')}`,
    `export ANTHROPIC_API_KEY=${keyRequired ? `"$${KEY_ENV}"` : 'mock'}`,
    'claude -p "Hello" --model mock-chat',
  ].join('\n'),
  LangChain: (base, keyRequired) => [
    '// hello.mjs — @langchain/openai',
    'import { ChatOpenAI } from "@langchain/openai";',
    '',
    'const llm = new ChatOpenAI({',
    '  model: "mock-chat",',
    `  apiKey: ${keyRequired ? `process.env.${KEY_ENV}` : '"mock"'},`,
    `  configuration: { baseURL: "${base}" },`,
    '});',
    'const msg = await llm.invoke("Hello");',
    'console.log(msg.content);',
  ].join('\n'),
};

const yesNo = (b) => (b ? 'yes' : 'no');

export class SetupView {
  constructor(state) {
    this.state = state; // { keyRequired: boolean|null }
    this.base = location.origin + '/v1';
    this.lang = 'curl';
    this.recent = new RowCache(compactRow);
    this.loadedModels = false;
    setText($('base-url'), this.base);
    $('copy-base').addEventListener('click', () => copy(this.base, $('base-url')));
    $('copy-snippet').addEventListener('click', () => copy($('snippet-code').textContent, $('snippet-code')));
    $('snippet-tabs').replaceChildren(...Object.keys(snippets).map((name) => {
      const b = el('button', { type: 'button', text: name, class: 'tab' });
      b.setAttribute('role', 'tab');
      b.addEventListener('click', () => { this.lang = name; this.renderSnippet(); });
      return b;
    }));
    $('send-test').addEventListener('click', () => this.sendTest());
    this.renderSnippet();
  }

  renderSnippet() {
    for (const b of $('snippet-tabs').children) b.setAttribute('aria-selected', String(b.textContent === this.lang));
    setText($('snippet-code'), snippets[this.lang](this.base, this.state.keyRequired === true));
    const status = this.state.keyRequired === null ? 'checking…'
      : this.state.keyRequired ? `required: send Authorization: Bearer <key> (the snippets read $${KEY_ENV})`
        : 'not required: any key, or none, is accepted';
    setText($('key-status'), status);
  }

  async loadModels() {
    const [models, health] = await Promise.all([getJSON('/v1/models'), getJSON('/health').catch(() => null)]);
    fill($('models-table').tBodies[0], (models.data || []).map((m) =>
      row(m.id, m.owned_by, yesNo(m.capabilities?.streaming), yesNo(m.capabilities?.tools), yesNo(m.capabilities?.reasoning))));
    const meta = health?.models?.metadata_only;
    setText($('models-note'), meta === undefined ? '' :
      `${models.data?.length ?? 0} executable; ${meta} metadata-only (catalog entries the mock never executes; /v1/models lists only executable ones).`);
    this.loadedModels = true;
  }

  async refresh() {
    const jobs = [this.refreshFixtures(), this.refreshRecent()];
    if (!this.loadedModels) jobs.push(this.loadModels());
    const results = await Promise.allSettled(jobs);
    for (const r of results) if (r.status === 'rejected' && !(r.reason instanceof ApiError)) throw r.reason;
  }

  async refreshFixtures() {
    let list;
    try {
      list = await getJSON('/_mock/fixtures');
    } catch (err) {
      setText($('fixtures-note'), err.message);
      return;
    }
    const data = list.data || [];
    fill($('fixtures-table').tBodies[0], data.map((f) =>
      row(f.name, f.origin, f.priority ?? 0, f.hits ?? 0, (f.conditions || []).join(', '))));
    setText($('fixtures-note'), data.length ? '' : 'No fixtures loaded: every call gets the model\'s generated answer (--fixtures, or POST /_mock/fixtures).');
  }

  async refreshRecent() {
    const list = await getJSON(journalPath('', 8));
    fill($('setup-calls').tBodies[0], this.recent.rowsFor(list.data || []));
  }

  async sendTest() {
    const stream = document.querySelector('input[name="test-mode"]:checked')?.value === 'stream';
    const button = $('send-test');
    button.disabled = true;
    setText($('test-result'), 'sending…');
    try {
      const body = {
        model: 'mock-chat',
        messages: [{ role: 'user', content: 'Hello from the mockgateway console' }],
        stream,
      };
      if (stream) body.stream_options = { include_usage: true };
      const resp = await post('/v1/chat/completions', body);
      // The answer is read to its end and dropped: the console shows calls, never their text.
      await resp.arrayBuffer();
      const id = resp.headers.get('x-request-id') || '';
      setText($('test-result'), `${resp.status} · ${stream ? 'stream' : 'JSON'} · ${id}`);
      await this.refreshRecent();
    } catch (err) {
      setText($('test-result'), err.message);
    } finally {
      button.disabled = false;
    }
  }
}
