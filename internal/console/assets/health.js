// health.js: health at a glance, computed in the page from two successive scrapes of /metrics
// (Prometheus text format): /v1 requests per second, their error rate (status ≥ 400), p50 and
// p99 latency from the duration histogram's buckets, and the streams open now.

import { $, setText } from './dom.js';
import { getText, ApiError } from './api.js';

const sampleRE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/;
const labelRE = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

// parseMetrics reads the samples of the families the strip needs.
export function parseMetrics(text) {
  const out = { requests: [], buckets: [], streams: 0 };
  for (const line of text.split('\n')) {
    if (line === '' || line[0] === '#') continue;
    if (!line.startsWith('mockgateway_http_request') && !line.startsWith('mockgateway_streams_active')) continue;
    const m = sampleRE.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[3] || '').matchAll(labelRE)) labels[l[1]] = l[2];
    const value = Number(m[4]);
    switch (m[1]) {
      case 'mockgateway_http_requests_total': out.requests.push({ labels, value }); break;
      case 'mockgateway_http_request_duration_seconds_bucket': out.buckets.push({ labels, value }); break;
      case 'mockgateway_streams_active': out.streams = value; break;
    }
  }
  return out;
}

const isV1 = (labels) => (labels.route || '').startsWith('/v1');

function totals(scrape) {
  let all = 0, errors = 0;
  for (const { labels, value } of scrape.requests) {
    if (!isV1(labels)) continue;
    all += value;
    if (Number(labels.status_code) >= 400) errors += value;
  }
  const byLE = new Map();
  for (const { labels, value } of scrape.buckets) {
    if (!isV1(labels)) continue;
    byLE.set(labels.le, (byLE.get(labels.le) || 0) + value);
  }
  return { all, errors, byLE };
}

// quantile interpolates within the cumulative buckets as Prometheus' histogram_quantile does.
export function quantile(q, buckets) {
  const bs = [...buckets].map(([le, count]) => ({ le: le === '+Inf' ? Infinity : Number(le), count }))
    .sort((a, b) => a.le - b.le);
  if (!bs.length) return NaN;
  const total = bs[bs.length - 1].count;
  if (total <= 0) return NaN;
  const rank = q * total;
  let prevLE = 0, prevCount = 0;
  for (const b of bs) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLE; // the highest finite bound, as Prometheus answers
      return prevLE + (b.le - prevLE) * ((rank - prevCount) / Math.max(b.count - prevCount, 1e-9));
    }
    prevLE = b.le;
    prevCount = b.count;
  }
  return prevLE;
}

function latency(seconds) {
  if (Number.isNaN(seconds)) return '—';
  const v = seconds * 1000;
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v >= 10 ? 0 : 1)} ms`;
}

export class Health {
  constructor() { this.prev = null; }

  async refresh() {
    let text;
    try {
      text = await getText('/metrics');
    } catch (err) {
      setText($('h-note'), err instanceof ApiError && err.status === 404 ? '/metrics is off' : `metrics: ${err.message}`);
      return;
    }
    const now = performance.now();
    const scrape = parseMetrics(text);
    const cur = { at: now, ...totals(scrape) };
    setText($('h-streams'), String(scrape.streams));
    const prev = this.prev;
    // Rates over about a second at least (a view change asks for a refresh at once), and a
    // counter that went back (the service restarted) starts the baseline again.
    if (prev && cur.at - prev.at < 900) return;
    this.prev = cur;
    if (!prev || cur.all < prev.all) return;
    const dt = (cur.at - prev.at) / 1000;
    const dAll = Math.max(cur.all - prev.all, 0);
    const dErr = Math.max(cur.errors - prev.errors, 0);
    setText($('h-rps'), dt > 0 ? (dAll / dt).toFixed(dAll / dt >= 10 ? 0 : 1) : '—');
    setText($('h-err'), dAll > 0 ? `${((dErr / dAll) * 100).toFixed(1)}%` : '—');
    const delta = new Map();
    for (const [le, count] of cur.byLE) delta.set(le, count - (prev.byLE.get(le) || 0));
    setText($('h-p50'), latency(quantile(0.5, delta)));
    setText($('h-p99'), latency(quantile(0.99, delta)));
    setText($('h-note'), `/v1 calls over the last ${dt.toFixed(1)} s`);
  }
}
