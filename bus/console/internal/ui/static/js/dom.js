// h builds an element: h('td', {class: 'x', 'data-id': id}, 'text', child).
// Text is always set as text, never parsed as HTML.
export function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

export const fmtTime = (t) => (t ? new Date(t).toLocaleTimeString() : '');
export const fmtUSD = (x) => (x ? '$' + x.toFixed(x < 0.01 ? 5 : 3) : '');
export const pretty = (v) => { try { return JSON.stringify(typeof v === 'string' ? JSON.parse(v) : v, null, 2); } catch { return String(v); } };
