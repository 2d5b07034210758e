// The runs list: newest first, a page at a time, new runs added live.
import { get } from './api.js';
import { h, fmtTime, fmtUSD } from './dom.js';
import { listen, state } from './app.js';

function row(r, fresh) {
  return h('tr', { 'data-run-id': r.id, 'data-state': r.state, 'data-seq': r.seq, class: fresh ? 'new' : null },
    h('td', {}, h('a', { href: `#/run/${encodeURIComponent(r.id)}` }, r.id),
      r.fork_of ? h('span', { class: 'tag', title: `fork of ${r.fork_of} at turn ${r.fork_turn}` }, 'fork') : null),
    h('td', {}, r.agent || ''),
    h('td', { class: 'input', title: r.input || '' }, r.input || ''),
    h('td', { class: `state state-${r.state}` }, r.state || ''),
    h('td', {}, r.turn || ''),
    h('td', {}, r.tokens || ''),
    h('td', {}, fmtUSD(r.cost_usd)),
    h('td', { class: 'muted' }, fmtTime(r.started)));
}

export function runsPage(main) {
  const body = h('tbody', { id: 'runs' });
  const more = h('button', { id: 'older', hidden: true }, 'Older runs');
  const newest = h('button', { id: 'newest', hidden: true }, 'Newest runs');
  const note = h('p', { class: 'muted', id: 'runs-empty', hidden: true }, 'No runs yet: start one from the chat.');
  main.append(h('h2', {}, 'Runs'),
    h('table', {}, h('thead', {}, h('tr', {}, ['run', 'agent', 'input', 'state', 'turns', 'tokens', 'cost', 'started'].map((t) => h('th', {}, t)))), body),
    note, h('div', { class: 'row' }, newest, more));
  const rows = new Map();
  let next = 0;
  let current = 0; // the page shown: 0 is the newest, which takes live runs
  let loading = false;
  const cap = () => state.info.page_size || 50;

  async function load(before) {
    if (loading) return;
    loading = true;
    try {
      const page = await get(`/api/runs${before ? `?before=${before}` : ''}`);
      // A page replaces the one shown: the list never holds more than a page.
      body.replaceChildren(); rows.clear();
      current = before || 0;
      newest.hidden = !current;
      for (const r of page.runs) {
        if (rows.has(r.id)) continue;
        const tr = row(r, false);
        rows.set(r.id, tr);
        body.append(tr);
      }
      next = page.next || 0;
      more.hidden = !next;
      note.hidden = rows.size > 0;
    } finally { loading = false; }
  }
  more.onclick = () => load(next);
  newest.onclick = () => load(0);
  const stop = listen((m) => {
    if (m.kind === 'reload') return load(current);
    if (!m.run) return;
    const old = rows.get(m.run.id);
    if (m.kind === 'run' && !old && !current) {
      const tr = row(m.run, true);
      rows.set(m.run.id, tr);
      body.prepend(tr);
      note.hidden = true;
      while (body.children.length > cap()) {
        const last = body.lastElementChild;
        rows.delete(last.dataset.runId);
        last.remove();
        more.hidden = false;
        next = Number(body.lastElementChild.dataset.seq) || next;
      }
    } else if (m.kind === 'state' && old) {
      const cells = old.children;
      old.dataset.state = m.run.state;
      cells[3].textContent = m.run.state; cells[3].className = `state state-${m.run.state}`;
      if (m.run.turn) cells[4].textContent = m.run.turn;
      if (m.run.tokens) cells[5].textContent = m.run.tokens;
      if (m.run.cost_usd) cells[6].textContent = fmtUSD(m.run.cost_usd);
    }
  });
  load(0);
  return stop;
}
