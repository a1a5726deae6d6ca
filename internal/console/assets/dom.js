// dom.js: small helpers to build DOM nodes. Every value reaches the page as text (textContent or
// a text node), never as markup.

// el makes an element: props sets className ("class"), text, href, title, dataset ("data") and
// plain properties; children are nodes or strings (strings become text nodes).
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = String(v);
    else if (k === 'data') Object.assign(node.dataset, v);
    else if (k === 'title' || k === 'href' || k === 'type' || k === 'value') node.setAttribute(k, String(v));
    else node[k] = v;
  }
  for (const c of children) {
    if (c === undefined || c === null) continue;
    node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return node;
}

export const $ = (id) => document.getElementById(id);

// setText sets a node's text; undefined and null become the empty string.
export function setText(node, value) {
  node.textContent = value === undefined || value === null ? '' : String(value);
}

// fill replaces a tbody's rows with the given ones in one DOM operation.
export function fill(tbody, rows) {
  const frag = document.createDocumentFragment();
  for (const r of rows) frag.append(r);
  tbody.replaceChildren(frag);
}

// row makes a table row of text cells.
export function row(...cells) {
  const tr = document.createElement('tr');
  for (const c of cells) {
    const td = document.createElement('td');
    if (c instanceof Node) td.append(c);
    else td.textContent = c === undefined || c === null ? '' : String(c);
    tr.append(td);
  }
  return tr;
}

// ms formats milliseconds for a table: "0.42 ms", "12.3 ms", "1.52 s".
export function ms(v) {
  if (v === undefined || v === null || Number.isNaN(v)) return '';
  if (v >= 1000) return (v / 1000).toFixed(2) + ' s';
  if (v >= 100) return v.toFixed(0) + ' ms';
  if (v >= 10) return v.toFixed(1) + ' ms';
  return v.toFixed(2) + ' ms';
}

const timeRE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

// parseTime reads an RFC 3339 time into milliseconds since the epoch, keeping the fraction below
// a millisecond that Date.parse drops (span times have nanoseconds).
export function parseTime(s) {
  const m = timeRE.exec(s || '');
  if (!m) return Date.parse(s);
  return Date.parse(m[1] + m[3]) + (m[2] ? parseFloat('0' + m[2]) * 1000 : 0);
}

// clock formats a time as the local HH:MM:SS.mmm.
export function clock(s) {
  const d = new Date(parseTime(s));
  if (Number.isNaN(d.getTime())) return '';
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

// copy puts text on the clipboard; where the Clipboard API is unavailable it selects the node's
// text for a manual copy.
export async function copy(text, node) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (node) {
      const range = document.createRange();
      range.selectNodeContents(node);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
    }
    return false;
  }
}
