// quotas.js: the calls view's quota panel — the simulated quota buckets of the scope the view
// shows, from GET /_mock/quotas, one row per model and organization: each bucket's limit, what
// remains and when it is full again. Refreshed with the journal.

import { $, el, fill, ms, row, setText } from './dom.js';
import { getText } from './api.js';

const LIMIT = 100;

export function quotasPath(scope) {
  const q = new URLSearchParams({ limit: String(LIMIT) });
  if (scope) q.set('scope', scope);
  return '/_mock/quotas?' + q.toString();
}

// limitsText is a quota's limits in the catalog's and x-mock-quota's names.
function limitsText(l) {
  const perWindow = ['rpm', 'tpm', 'itpm', 'otpm'].filter((k) => l[k]).map((k) => `${k} ${l[k]}`).join(', ');
  return [perWindow && `${perWindow} per ${until(l.window_ms)}`, l.rpd && `rpd ${l.rpd}`].filter(Boolean).join('; ');
}

// until formats a wait: milliseconds and seconds as the other views do, then minutes and hours
// (a daily bucket refills over a day).
function until(v) {
  if (v < 60000) return ms(v);
  const s = Math.ceil(v / 1000);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), rest = s % 60;
  if (h) return m ? `${h} h ${m} min` : `${h} h`;
  return rest ? `${m} min ${rest} s` : `${m} min`;
}

// BUCKETS are the panel's bucket columns, in the order the providers list their limits; only
// those some listed quota has are shown.
const BUCKETS = [
  ['requests', 'requests left'], ['tokens', 'tokens left'], ['input_tokens', 'input tokens left'],
  ['output_tokens', 'output tokens left'], ['daily', 'today\'s requests left'],
];

// bucketCell is a bucket's remaining of its limit and when it is full again; blank for a limit
// the quota does not have.
function bucketCell(b) {
  if (!b) return '';
  const left = el('span', { class: b.remaining <= 0 ? 'bucket-empty' : '', text: `${b.remaining} / ${b.limit}` });
  return el('span', {}, left, ` · ${b.reset_ms > 0 ? `full in ${until(b.reset_ms)}` : 'full'}`);
}

export class QuotasPanel {
  constructor() {
    this.tbody = $('quotas-table').tBodies[0];
    this.lastText = null;
    this.seq = 0; // the latest refresh: an older answer, for a scope the view left, is dropped
  }

  // refresh fetches the scope's buckets; it renders only when the answer changed.
  async refresh(scope) {
    const seq = ++this.seq;
    let text;
    try {
      text = await getText(quotasPath(scope));
    } catch (err) {
      if (seq !== this.seq) return;
      this.lastText = null;
      fill(this.tbody, []);
      setText($('quotas-note'), `quota buckets: ${err.message}`);
      return;
    }
    if (seq !== this.seq || text === this.lastText) return;
    this.lastText = text;
    const list = JSON.parse(text).data || [];
    const shown = BUCKETS.filter(([b]) => list.some((q) => q[b]));
    const head = row('model', 'organization', 'limits', ...shown.map(([, label]) => label));
    head.replaceChildren(...[...head.children].map((c) => el('th', { text: c.textContent })));
    $('quotas-table').tHead.replaceChildren(head);
    fill(this.tbody, list.map((q) => {
      const tr = row(q.model, q.org, limitsText(q.limits), ...shown.map(([b]) => bucketCell(q[b])));
      tr.dataset.model = q.model;
      tr.dataset.org = q.org;
      return tr;
    }));
    $('quotas-table').hidden = list.length === 0;
    setText($('quotas-note'), list.length ? '' : `No quota buckets ${scope ? `in scope ${scope}` : 'for the unscoped calls'}: a model with limits (the catalog's, or x-mock-quota's) has them once a call draws from them, until they are full again.`);
  }
}
