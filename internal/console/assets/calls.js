// calls.js: the live table of recent calls, from GET /_mock/journal. Rows are built once per
// journal entry and kept (an entry never changes once journaled); a poll that brings new entries
// or a filter change replaces the tbody's children in one operation.

import { $, el, ms, clock, setText } from './dom.js';
import { getText, ApiError } from './api.js';
import { QuotasPanel } from './quotas.js';

// callHref is the deep link of one call; the scope rides along when the call is scoped.
export function callHref(entry) {
  const id = encodeURIComponent(entry.request_id || '');
  return entry.scope ? `#/calls/${id}?scope=${encodeURIComponent(entry.scope)}` : `#/calls/${id}`;
}

function entryKey(e) { return `${e.time}|${e.request_id}|${e.scope || ''}`; }

function td(text, cls) {
  const c = document.createElement('td');
  if (cls) c.className = cls;
  c.textContent = text === undefined || text === null ? '' : String(text);
  return c;
}

function statusClass(status) {
  if (status >= 500) return 'st-5xx';
  if (status >= 400) return 'st-4xx';
  return 'st-ok';
}

function sdkLabel(sdk) {
  if (!sdk) return '';
  const parts = [];
  if (sdk.lang) parts.push(sdk.lang + (sdk.package_version ? ' ' + sdk.package_version : ''));
  if (sdk.retry_count && sdk.retry_count !== '0') parts.push('retry ' + sdk.retry_count);
  if (!parts.length && sdk.user_agent) parts.push(sdk.user_agent);
  return parts.join(' · ');
}

// LIMITS names the simulated limit a call hit (the journal entry's limit_hit, the label of
// mockgateway_quota_refusals_total) as the console shows it.
export const LIMITS = {
  requests: 'quota: requests',
  tokens: 'quota: tokens',
  daily: 'quota: daily requests',
  input_tokens: 'quota: input tokens',
  output_tokens: 'quota: output tokens',
  overloaded: 'overloaded',
};

// limitLabel is what the calls table says of a call's simulated limits: the limit that refused
// it, and how long it waited for a place in its model's capacity.
export function limitLabel(e) {
  const parts = [];
  if (e.limit_hit) parts.push(LIMITS[e.limit_hit] || e.limit_hit);
  if (e.queue_ms > 0) parts.push(`queued ${ms(e.queue_ms)}`);
  return parts.join(' · ');
}

function limitCell(e) {
  const c = td(limitLabel(e));
  if (e.limit_hit) {
    c.className = 'limit-hit';
    c.dataset.limit = e.limit_hit;
    c.title = e.status < 400 ? 'refused by this limit, then served by the gateway policy (its retry or its fallback)' : 'refused by this limit';
  } else if (e.queue_ms > 0) {
    c.className = 'queued';
    c.title = 'waited for a place in its model\'s capacity';
  }
  return c;
}

function idCell(e) {
  const c = document.createElement('td');
  c.className = 'mono id';
  c.title = e.request_id;
  c.append(el('a', { href: callHref(e), text: e.request_id, class: 'call-link' }));
  return c;
}

// fullRow is one call of the calls view.
function fullRow(e) {
  const tr = document.createElement('tr');
  tr.dataset.requestId = e.request_id;
  tr.append(
    td(clock(e.time), 'mono'),
    idCell(e),
    td(e.scope || ''),
    td(e.dialect || ''),
    td(e.model || e.route),
    td(e.status, statusClass(e.status)),
    td(e.error_code || ''),
    td(e.stream ? (e.stream_outcome || 'stream') : ''),
    td(e.chunks ?? '', 'num'),
    td(ms(e.time_to_first_chunk_ms), 'num'),
    td(ms(e.duration_ms), 'num'),
    td(e.fixture || ''),
    td(e.fault ? `${e.fault} · ${e.attempt ?? 1}` : (e.attempt > 1 ? `attempt ${e.attempt}` : '')),
    limitCell(e),
    td(sdkLabel(e.sdk)),
  );
  if (e.limit_hit) tr.classList.add('refused');
  if (e.queue_ms > 0) tr.classList.add('waited');
  if (e.sdk?.user_agent) tr.lastChild.title = e.sdk.user_agent;
  tr.children[3].title = e.route; // the route the call came by
  return tr;
}

// compactRow is one call of the setup view's "arriving below" table.
export function compactRow(e) {
  const tr = document.createElement('tr');
  tr.dataset.requestId = e.request_id;
  tr.append(
    td(clock(e.time), 'mono'), idCell(e), td(e.model || `${e.method} ${e.route}`),
    td(e.status, statusClass(e.status)), td(e.stream ? (e.stream_outcome || 'stream') : 'json'),
    td(ms(e.duration_ms), 'num'),
  );
  return tr;
}

// RowCache keeps built rows by entry, dropping those no longer fetched.
export class RowCache {
  constructor(build) { this.build = build; this.rows = new Map(); }
  rowsFor(entries) {
    const next = new Map();
    const out = [];
    for (const e of entries) {
      const k = entryKey(e);
      let tr = next.get(k) || this.rows.get(k);
      if (!tr) tr = this.build(e);
      next.set(k, tr);
      out.push(tr);
    }
    this.rows = next;
    return out;
  }
}

export function journalPath(scope, limit) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (scope) q.set('scope', scope);
  return '/_mock/journal?' + q.toString();
}

function matches(e, f) {
  if (f.dialect && (e.dialect || '') !== f.dialect) return false;
  if (f.model && (e.model || e.route) !== f.model) return false;
  if (f.status === 'err' && !(e.status >= 400)) return false;
  if (f.status && f.status !== 'err' && String(e.status)[0] !== f.status) return false;
  if (f.error && (e.error_code || '') !== f.error) return false;
  if (f.limits === 'refused' && !e.limit_hit) return false;
  if (f.limits === 'queued' && !(e.queue_ms > 0)) return false;
  return true;
}

// syncOptions keeps a select's options equal to "any" plus values, keeping the selection.
function syncOptions(select, values) {
  const want = ['', ...[...values].sort()];
  const have = [...select.options].map((o) => o.value);
  if (want.length === have.length && want.every((v, i) => v === have[i])) return;
  const selected = select.value;
  select.replaceChildren(...want.map((v) => el('option', { value: v, text: v || 'any' })));
  if (selected && !want.includes(selected)) select.append(el('option', { value: selected, text: selected }));
  select.value = selected;
}

export class CallsView {
  constructor() {
    this.tbody = $('calls-table').tBodies[0];
    this.cache = new RowCache(fullRow);
    this.quotas = new QuotasPanel();
    this.lastText = null;
    this.lastKey = '';
    this.entries = [];
    this.filters = { scope: '', dialect: '', model: '', status: '', error: '', limits: '', limit: 1000 };
    const refilter = () => { this.readFilters(); this.render(); };
    for (const id of ['f-dialect', 'f-model', 'f-status', 'f-error', 'f-limits']) $(id).addEventListener('change', refilter);
    $('f-limit').addEventListener('change', () => { this.readFilters(); this.refresh(); });
    let timer = 0;
    $('f-scope').addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => { this.readFilters(); this.refresh(); }, 250);
    });
    $('calls-filters').addEventListener('submit', (ev) => { ev.preventDefault(); this.readFilters(); this.refresh(); });
  }

  readFilters() {
    this.filters = {
      scope: $('f-scope').value.trim(), dialect: $('f-dialect').value, model: $('f-model').value, status: $('f-status').value,
      error: $('f-error').value, limits: $('f-limits').value, limit: Number($('f-limit').value) || 1000,
    };
  }

  get scope() { return this.filters.scope; }

  // refresh fetches the journal, and the scope's quota buckets beside it; each renders only
  // when its answer or the filters changed.
  async refresh() {
    await Promise.all([this.refreshCalls(), this.quotas.refresh(this.filters.scope)]);
  }

  async refreshCalls() {
    const path = journalPath(this.filters.scope, this.filters.limit);
    let text;
    try {
      text = await getText(path);
      setText($('calls-error'), '');
    } catch (err) {
      if (path !== journalPath(this.filters.scope, this.filters.limit)) return;
      this.entries = [];
      this.lastText = null;
      setText($('calls-error'), err instanceof ApiError && err.status === 400
        ? 'scope: 1 to 128 letters, digits, ".", "_", ":" or "-"' : err.message);
      this.render();
      return;
    }
    if (path !== journalPath(this.filters.scope, this.filters.limit)) return; // the filters moved on
    if (text === this.lastText) return;
    this.lastText = text;
    this.entries = JSON.parse(text).data || [];
    this.render();
  }

  render() {
    const t0 = performance.now();
    const dialects = new Set(), models = new Set(), errors = new Set();
    for (const e of this.entries) {
      if (e.dialect) dialects.add(e.dialect); // the names the service sent: no list of its own
      models.add(e.model || e.route);
      if (e.error_code) errors.add(e.error_code);
    }
    syncOptions($('f-dialect'), dialects);
    syncOptions($('f-model'), models);
    syncOptions($('f-error'), errors);
    const visible = this.entries.filter((e) => matches(e, this.filters));
    const rows = this.cache.rowsFor(visible);
    const frag = document.createDocumentFragment();
    for (const r of rows) frag.append(r);
    this.tbody.replaceChildren(frag);
    const took = performance.now() - t0;
    const table = $('calls-table');
    table.dataset.rows = String(rows.length);
    table.dataset.renderMs = took.toFixed(1);
    const scope = this.filters.scope ? `scope ${this.filters.scope}` : 'unscoped';
    setText($('calls-info'), `${visible.length} of ${this.entries.length} calls (${scope}) · rendered in ${took.toFixed(1)} ms`);
  }
}
