// call.js: one call — its access-log-like line, its client setup (the journal entry's shape and
// SDK headers), and its trace as a waterfall from /debug/traces?request_id=…: spans as bars and
// span events (stream.*, gateway.retry, gateway.fallback) as marks on one time axis.

import { $, el, row, fill, setText, ms, parseTime } from './dom.js';
import { getJSON, ApiError } from './api.js';
import { journalPath, LIMITS } from './calls.js';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];

// logLine renders an entry as the access log would: key=value pairs, only those present.
function logLine(e, traceID) {
  const parts = [e.time, e.method, e.route, String(e.status)];
  const kv = (k, v) => { if (v !== undefined && v !== null && v !== '' && v !== false) parts.push(`${k}=${v}`); };
  kv('request_id', e.request_id);
  kv('trace_id', traceID);
  kv('scope', e.scope);
  kv('model', e.model);
  kv('error_code', e.error_code);
  kv('stream', e.stream);
  kv('stream_outcome', e.stream_outcome);
  kv('chunks', e.chunks);
  kv('time_to_first_chunk_ms', e.time_to_first_chunk_ms);
  kv('duration_ms', e.duration_ms);
  kv('finish_reason', e.finish_reason);
  kv('prompt_tokens', e.prompt_tokens);
  kv('completion_tokens', e.completion_tokens);
  kv('fixture', e.fixture);
  kv('fault', e.fault);
  kv('attempt', e.attempt);
  kv('limit_hit', e.limit_hit);
  kv('queue_ms', e.queue_ms);
  return parts.join(' ');
}

// LIMIT_MEANS says what each limit a call can hit is: the bucket of its model's simulated quota,
// or its capacity.
const LIMIT_MEANS = {
  requests: 'its quota\'s requests per window (rpm)',
  tokens: 'its quota\'s tokens per window (tpm), or a request larger than the whole bucket',
  daily: 'its quota\'s requests per day (rpd)',
  input_tokens: 'its quota\'s input tokens per window (itpm), or a prompt larger than the whole bucket',
  output_tokens: 'its quota\'s output tokens per window (otpm), or a budget larger than the whole bucket',
  overloaded: 'its model\'s capacity and queue were full',
};

// limitFacts are a call's simulated limits: the one that refused it, and its wait for a place.
function limitFacts(e) {
  const pairs = [];
  if (e.limit_hit) {
    const served = e.status < 400 ? ' — then served by the gateway policy (its retry or its fallback)' : '';
    pairs.push(['refused by', `${LIMITS[e.limit_hit] || e.limit_hit}: ${LIMIT_MEANS[e.limit_hit] || ''}${served}`]);
  }
  if (e.queue_ms > 0) pairs.push(['queued', `${ms(e.queue_ms)} waiting for a place in its model's capacity (part of its time to first chunk)`]);
  return pairs;
}

function facts(pairs) {
  const dl = el('dl', { class: 'facts' });
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    dl.append(el('dt', { text: k }), el('dd', { text: v === true ? 'yes' : String(v) }));
  }
  return dl;
}

function shapeView(e) {
  const s = e.shape || {};
  const box = document.createDocumentFragment();
  box.append(facts([
    ['dialect', e.dialect],
    ['fields set', (s.fields || []).join(', ')],
    ['longest message', s.longest_content_chars !== undefined ? `${s.longest_content_chars} chars` : ''],
    ['messages carry a name', s.message_names],
    ['tool calls sent back', s.tool_calls],
    ['tools', s.tools],
    ['strict tools', s.strict_tools],
    ['tools with a schema', s.tool_schemas],
    ['tool choice', s.tool_choice],
    ['response format', s.response_format],
    ['response schema', s.response_schema],
    ['n', s.n],
    ['stop sequences', s.stop],
    ['max tokens', s.max_tokens !== undefined ? `${s.max_tokens} (${s.max_tokens_param || 'max_tokens'})` : ''],
    ['stream', s.stream],
    ['include usage', s.include_usage],
    ['parallel tool calls', s.parallel_tool_calls],
  ]));
  const roles = ROLES.filter((r) => s.messages?.[r] || s.content_chars?.[r]);
  if (roles.length) {
    const t = el('table', { class: 'compact', id: 'call-roles' },
      el('thead', {}, row('role', 'messages', 'content chars')), el('tbody'));
    fill(t.tBodies[0], roles.map((r) => row(r, s.messages?.[r] ?? 0, s.content_chars?.[r] ?? 0)));
    box.append(t);
  } else if (!e.shape) {
    box.append(el('p', { class: 'muted', text: 'No request shape: the call ended before its body decoded, or is not a chat call.' }));
  }
  const sdk = e.sdk || {};
  box.append(el('h4', { text: 'SDK and retry headers' }), facts([
    ['language', sdk.lang], ['package version', sdk.package_version], ['OS', sdk.os],
    ['runtime', [sdk.runtime, sdk.runtime_version].filter(Boolean).join(' ')],
    ['retry count', sdk.retry_count], ['user agent', sdk.user_agent],
  ]));
  if (!Object.keys(sdk).length) box.append(el('p', { class: 'muted', text: 'No SDK headers.' }));
  return box;
}

function attrsText(attrs) {
  return Object.entries(attrs || {}).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`).join(' ');
}

const pct = (v) => `${Math.max(0, Math.min(100, v)).toFixed(3)}%`;

// waterfall draws spans on one axis from the earliest start to the latest end or event.
function waterfall(spans) {
  const box = document.createDocumentFragment();
  if (!spans.length) {
    box.append(el('p', { class: 'muted', text: 'No spans buffered for this call (the buffer keeps the most recent ones; tracing may be off).' }));
    return { box, events: [] };
  }
  const times = spans.map((s) => ({ s, start: parseTime(s.start_time), end: parseTime(s.end_time) }));
  let t0 = Infinity, t1 = -Infinity;
  for (const t of times) {
    t0 = Math.min(t0, t.start);
    t1 = Math.max(t1, t.end);
    for (const ev of t.s.events || []) t1 = Math.max(t1, parseTime(ev.time));
  }
  const total = Math.max(t1 - t0, 0.001);
  const at = (t) => ((t - t0) / total) * 100;

  const axis = el('div', { class: 'wf-row wf-axis' }, el('div', { class: 'wf-label', text: 'span' }));
  const ticks = el('div', { class: 'wf-track' });
  for (let i = 0; i <= 4; i++) {
    const tick = el('span', { class: 'wf-tick', text: ms((total * i) / 4) });
    tick.style.setProperty('left', pct(i * 25));
    ticks.append(tick);
  }
  axis.append(ticks);
  box.append(axis);

  const byID = new Map(spans.map((s) => [s.span_id, s]));
  const depth = (s) => { let d = 0; for (let p = byID.get(s.parent_span_id); p && d < 10; p = byID.get(p.parent_span_id)) d++; return d; };
  const events = [];
  for (const { s, start, end } of times) {
    const label = el('div', { class: 'wf-label' },
      el('span', { class: 'wf-name', text: s.name }),
      el('span', { class: 'muted', text: ` ${s.kind} · ${ms(s.duration_ms)}` }));
    label.style.setProperty('padding-left', `${depth(s) * 1.2}em`);
    const bar = el('div', { class: `wf-bar kind-${s.kind} status-${s.status?.code || 'unset'}`, title: `${s.name}: ${ms(s.duration_ms)}` });
    bar.style.setProperty('left', pct(at(start)));
    bar.style.setProperty('width', pct(Math.max(at(end) - at(start), 0.3)));
    const track = el('div', { class: 'wf-track' }, bar);
    for (const ev of s.events || []) {
      const t = parseTime(ev.time);
      const offset = t - t0;
      events.push({ offset, span: s.name, ev });
      const cls = ev.name.startsWith('gateway.') ? 'wf-event gateway' : 'wf-event';
      const mark = el('span', { class: cls, title: `${ev.name} at +${ms(offset)}`, data: { name: ev.name } });
      mark.style.setProperty('left', pct(at(t)));
      track.append(mark);
    }
    box.append(el('div', { class: 'wf-row', data: { span: s.name, kind: s.kind } }, label, track));
  }
  events.sort((a, b) => a.offset - b.offset);
  return { box, events };
}

export class CallView {
  constructor(state) {
    this.state = state; // { keyRequired: boolean|null }
    this.key = '';
    this.done = false;
  }

  // show opens a call; scope is where its journal entry is looked up.
  show(requestID, scope) {
    const key = `${scope}|${requestID}`;
    if (key !== this.key) {
      this.key = key;
      this.requestID = requestID;
      this.scope = scope;
      this.done = false;
      this.entry = null;
      setText($('call-id'), requestID);
      setText($('call-error'), '');
      setText($('call-logline'), '');
      $('call-limits').replaceChildren();
      $('call-trace-facts').replaceChildren();
      $('call-shape').replaceChildren();
      $('call-waterfall').replaceChildren();
      $('call-events').tBodies[0].replaceChildren();
      $('call-back').setAttribute('href', '#/calls');
    }
  }

  // refresh loads the call until both its journal entry and its finished trace are there; a
  // call never changes after that.
  async refresh() {
    if (this.done || !this.requestID) return;
    const key = this.key;
    const q = new URLSearchParams({ request_id: this.requestID });
    const [journal, traces] = await Promise.allSettled([
      this.entry ? Promise.resolve(null) : getJSON(journalPath(this.scope, 1000)),
      getJSON('/debug/traces?' + q.toString()),
    ]);
    if (key !== this.key) return;
    if (journal.status === 'fulfilled' && journal.value) {
      this.entry = (journal.value.data || []).find((e) => e.request_id === this.requestID) || null;
    }
    const spans = traces.status === 'fulfilled' ? traces.value.spans || [] : [];
    const traceID = spans[0]?.trace_id || '';
    const messages = [];
    if (journal.status === 'rejected') messages.push(`journal: ${journal.reason.message}`);
    else if (!this.entry) messages.push(`Not in the ${this.scope ? `journal of scope ${this.scope}` : 'unscoped journal'} (it keeps the most recent calls; a scoped call needs its scope: #/calls/<id>?scope=<scope>).`);
    if (traces.status === 'rejected') {
      const r = traces.reason;
      messages.push(r instanceof ApiError && r.status === 404 ? 'Traces: /debug/traces is off.' : `traces: ${r.message}`);
    }
    setText($('call-error'), messages.join(' '));

    if (this.entry) {
      setText($('call-logline'), logLine(this.entry, traceID));
      $('call-limits').replaceChildren(...facts(limitFacts(this.entry)).childNodes);
      $('call-shape').replaceChildren(shapeView(this.entry));
    }
    const traceFacts = $('call-trace-facts');
    traceFacts.replaceChildren();
    if (traceID) {
      // A plain link cannot send the local key, which /debug/traces takes when one is set.
      const raw = this.state.keyRequired ? [] : [' · ', el('a', { href: `/debug/traces?trace_id=${encodeURIComponent(traceID)}`, text: 'raw spans', target: '_blank', rel: 'noopener' })];
      traceFacts.append(
        el('dt', { text: 'trace id' }),
        el('dd', {}, el('code', { id: 'call-trace-id', text: traceID }), ...raw),
        el('dt', { text: 'exemplar' }),
        el('dd', { class: 'muted', text: 'the same trace_id labels this call\'s exemplars on mockgateway_http_request_duration_seconds in /metrics (OpenMetrics format)' }),
      );
    }
    const { box, events } = waterfall(spans);
    $('call-waterfall').replaceChildren(box);
    fill($('call-events').tBodies[0], events.map(({ offset, span, ev }) =>
      row(`+${ms(offset)}`, span, ev.name, attrsText(ev.attributes))));
    // The server span ends last, after its children: once it is buffered the trace is whole.
    this.done = Boolean(this.entry && spans.some((s) => s.kind === 'server'));
  }
}
