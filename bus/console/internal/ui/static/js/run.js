// One run's timeline as a tree: turns (context breakdown, tokens, cost),
// tool calls with arguments and results, nested runs, A2A tasks,
// failures with the policy's decision, permission asks; and forks.
import { get, post, stream } from './api.js';
import { h, fmtTime, fmtUSD, pretty } from './dom.js';
import { state, listen } from './app.js';
import { questionCard } from './inbox.js';

const CTX_PARTS = ['system', 'skills', 'tools', 'history', 'tool_results'];

function contextBar(c) {
  if (!c || !c.prompt) return null;
  // The bar splits the prompt; the legend says how much of the window it fills.
  const used = c.window ? ` (${((100 * c.prompt) / c.window).toFixed(c.prompt * 100 < c.window ? 2 : 0)}% of the window)` : '';
  return h('div', { class: 'ctx', 'data-window': c.window },
    h('div', { class: 'ctxbar', title: `prompt ${c.prompt} tokens${used}` },
      CTX_PARTS.map((p) => {
        const span = h('span', { class: `c-${p}` });
        span.style.width = `${(100 * (c[p] || 0)) / c.prompt}%`; // CSSOM: the CSP allows no inline style attribute
        return span;
      })),
    h('div', { class: 'legend muted' }, CTX_PARTS.map((p) => h('span', {}, h('i', { class: `c-${p}` }), `${p.replace('_', ' ')} ${c[p] || 0}`)),
      h('span', {}, `prompt ${c.prompt} / window ${c.window || '?'}${used}`),
      c.tools_deferred ? h('span', {}, `${c.tools_deferred} tools deferred`) : null,
      c.compacted ? h('span', {}, 'compacted') : null));
}

// A tree of one run (the page's, or a nested one).
class RunTree {
  constructor(id, list, onFork) {
    this.id = id; this.list = list; this.onFork = onFork;
    this.turns = new Map(); this.calls = new Map(); this.steps = new Map(); this.nested = new Map(); this.text = null;
  }
  node(kind, type, ...head) {
    const kids = h('ul', { class: 'tree' });
    const li = h('li', { 'data-type': type }, h('div', { class: 'node-head' }, h('span', { class: 'kind' }, kind), ...head), kids);
    li.kids = kids;
    return li;
  }
  container(ev) {
    if (ev.call && this.calls.has(ev.call.id)) return this.calls.get(ev.call.id).kids;
    if (ev.turn && this.turns.has(ev.turn)) return this.turns.get(ev.turn).kids;
    return this.list;
  }
  add(ev) {
    switch (ev.type) {
      case 'run_started':
        this.list.append(this.node('run', ev.type, h('strong', {}, ev.agent || ''), h('span', { class: 'muted' }, fmtTime(ev.time)),
          this.onFork ? h('button', { 'data-fork-turn': 0, onclick: () => this.onFork(0) }, 'Fork from start') : null,
          h('pre', {}, ev.text || '')));
        break;
      case 'turn_started': {
        const t = this.node('turn', ev.type, h('strong', {}, `turn ${ev.turn}`), h('span', { class: 'muted usage' }));
        t.dataset.turn = ev.turn;
        if (ev.context) t.kids.before(contextBar(ev.context));
        this.turns.set(ev.turn, t); this.list.append(t); this.text = null;
        break;
      }
      case 'model_text': {
        if (!this.text) {
          this.text = h('pre', { class: 'model-text' });
          this.container(ev).append(h('li', { 'data-type': 'model_text' }, this.text));
        }
        this.text.textContent += ev.text || '';
        break;
      }
      case 'model_reasoning':
        this.container(ev).append(this.node('reasoning', ev.type, h('pre', {}, ev.text || '')));
        break;
      case 'model_turn': {
        const t = this.turns.get(ev.turn);
        if (t) {
          const u = ev.usage || {};
          t.querySelector('.usage').textContent = `in ${u.input_tokens || 0} · out ${u.output_tokens || 0}` +
            (u.cache_read_tokens ? ` · cached ${u.cache_read_tokens}` : '') + (ev.cost && ev.cost.usd ? ` · ${fmtUSD(ev.cost.usd / 1e12)}` : '');
          if (this.onFork) t.querySelector('.node-head').append(h('button', { 'data-fork-turn': ev.turn, onclick: () => this.onFork(ev.turn) }, 'Fork after this turn'));
          if (!this.text && ev.text) t.kids.append(h('li', { 'data-type': 'model_text' }, h('pre', { class: 'model-text' }, ev.text)));
        }
        this.text = null;
        break;
      }
      case 'tool_started': {
        const src = ev.call.source || {};
        const a2a = src.kind === 'a2a';
        const c = this.node(a2a ? 'a2a task' : 'tool', ev.type, h('code', {}, ev.call.tool), src.name ? h('span', { class: 'tag' }, `${src.kind}:${src.name}`) : null,
          h('span', { class: 'muted status' }, 'running'));
        c.dataset.call = ev.call.id;
        if (ev.call.args) c.kids.append(h('li', {}, h('span', { class: 'muted' }, 'arguments'), h('pre', {}, pretty(ev.call.args))));
        this.calls.set(ev.call.id, c); this.container({ turn: ev.turn }).append(c); this.text = null;
        break;
      }
      case 'tool_progress': {
        const p = ev.progress || {};
        this.container(ev).append(h('li', { class: 'muted', 'data-type': ev.type }, `progress ${p.progress}${p.total ? '/' + p.total : ''} ${p.message || ''}`));
        break;
      }
      case 'tool_finished': {
        const c = this.calls.get(ev.call.id);
        const r = ev.result || {};
        const text = (r.parts || []).map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join('\n');
        if (c) {
          const st = c.querySelector('.status');
          st.textContent = `${r.is_error ? 'error' : 'done'} in ${((ev.call.elapsed || 0) / 1e6).toFixed(0)} ms`;
          st.className = r.is_error ? 'error status' : 'muted status';
          c.dataset.finished = '1';
          c.kids.append(h('li', { 'data-type': ev.type }, h('span', { class: 'muted' }, 'result'), h('pre', {}, text)));
        }
        break;
      }
      case 'failure': {
        const f = ev.failure || {};
        this.container(ev).append(this.node('failure', ev.type, h('strong', { class: 'error' }, f.kind),
          h('span', { class: 'tag' }, `policy: ${f.action}${f.retryable ? ', retryable' : ''}`), f.source ? h('span', { class: 'tag' }, f.source + (f.name ? ':' + f.name : '')) : null,
          h('span', {}, f.message)));
        break;
      }
      case 'guard': {
        const g = ev.guard || {};
        this.container(ev).append(this.node('guard', ev.type, h('span', {}, JSON.stringify(g))));
        break;
      }
      case 'tools_changed':
        this.list.append(this.node('tools', ev.type, h('span', { class: 'muted' }, `toolset ${ev.toolset} changed`)));
        break;
      case 'step_started': {
        const s = this.node('step', ev.type, h('strong', {}, ev.step.name), ev.step.attempt > 1 ? h('span', { class: 'tag' }, `attempt ${ev.step.attempt}`) : null);
        this.steps.set(ev.step.run || ev.step.name, s); this.list.append(s);
        break;
      }
      case 'step_finished': {
        const s = this.steps.get(ev.step.run || ev.step.name);
        if (s) s.kids.append(h('li', { 'data-type': ev.type, class: 'muted' }, ev.step.dropped ? 'dropped' : `finished in ${((ev.step.elapsed || 0) / 1e6).toFixed(0)} ms`));
        break;
      }
      case 'nested': {
        const n = ev.nested;
        if (!n) break;
        let t = this.nested.get(n.run);
        if (!t) {
          const p = n.parent || {};
          const where = (p.call && this.calls.get(p.call)) || (p.step && [...this.steps.values()].find((s) => s.dataset.step === p.step)) || this.steps.get(n.run);
          const li = this.node('nested run', 'nested', h('code', {}, n.run), h('span', { class: 'muted' }, n.agent || ''));
          (where ? where.kids : this.list).append(li);
          t = new RunTree(n.run, li.kids, null);
          this.nested.set(n.run, t);
        }
        t.add(n);
        break;
      }
      case 'handoff':
        this.list.append(this.node('handoff', ev.type, h('span', {}, JSON.stringify(ev.handoff || {}))));
        break;
      case 'final': {
        const a = ev.answer || {};
        this.list.append(this.node('final', ev.type, h('strong', { class: 'state-done' }, 'done'),
          h('span', { class: 'muted' }, `${a.turns || 0} turns · ${a.tool_calls || 0} calls · ${(a.usage && (a.usage.input_tokens + a.usage.output_tokens)) || 0} tokens · ${fmtUSD((a.cost && a.cost.usd || 0) / 1e12)}`),
          h('pre', { class: 'answer' }, ev.text || '')));
        break;
      }
      case 'run_failed': {
        const f = ev.failure || {};
        this.list.append(this.node(f.kind === 'parked' ? 'parked' : 'failed', ev.type, h('strong', { class: f.kind === 'parked' ? 'state-parked' : 'error' }, f.kind), h('span', {}, f.message || '')));
        break;
      }
    }
  }
}

function forkForm(id, turn, onClose) {
  const input = h('textarea', { id: 'fork-input', placeholder: turn === 0 ? 'the new input (empty: the same input)' : 'the next user message' });
  const model = h('select', { id: 'fork-model' }, h('option', { value: '' }, 'same model'), (state.info.models || []).map((m) => h('option', { value: m }, m)));
  const prompt = h('textarea', { id: 'fork-instructions', placeholder: 'new system prompt (empty: the same)' });
  const err = h('p', { class: 'error' });
  const go = h('button', { class: 'primary', id: 'fork-go' }, 'Start fork');
  go.onclick = async () => {
    try {
      const { run } = await post(`/api/runs/${encodeURIComponent(id)}/fork`, { turn, input: input.value, model: model.value || undefined, instructions: prompt.value || undefined });
      location.hash = `#/run/${encodeURIComponent(run)}`;
    } catch (e) { err.textContent = e.message; }
  };
  return h('div', { class: 'card', id: 'fork-form' }, h('strong', {}, turn === 0 ? 'Fork from the start' : `Fork after turn ${turn}`),
    input, h('div', { class: 'row' }, 'model', model), prompt, h('div', { class: 'row' }, go, h('button', { onclick: onClose }, 'Cancel')), err);
}

export function runPage(main, id) {
  const head = h('div', { class: 'card', id: 'run-head' }, h('strong', {}, id));
  const forkSlot = h('div');
  const asks = h('div', { id: 'run-questions' });
  const answered = h('div', { id: 'run-answers' });
  const list = h('ul', { class: 'tree', id: 'timeline' });
  const cut = h('p', { class: 'muted', hidden: true, id: 'timeline-cut' });
  main.append(h('p', {}, h('a', { href: '#/' }, '← runs')), head, forkSlot, asks, answered, list, cut);
  const openFork = state.info.can_fork ? (turn) => { forkSlot.replaceChildren(forkForm(id, turn, () => forkSlot.replaceChildren())); forkSlot.scrollIntoView(); } : null;
  let tree = new RunTree(id, list, openFork);
  get(`/api/runs/${encodeURIComponent(id)}`).then((s) => {
    head.replaceChildren(...[h('strong', {}, id), h('span', { class: `state state-${s.state}`, id: 'run-state' }, ` ${s.state}`),
      s.fork_of ? h('span', {}, ' · fork of ', h('a', { href: `#/run/${encodeURIComponent(s.fork_of)}` }, s.fork_of), ` after turn ${s.fork_turn || 0}`) : null,
      h('span', { class: 'muted' }, ` · ${s.agent || ''} · started ${fmtTime(s.started)}`)].filter(Boolean));
  }).catch(() => {});
  const es = stream(`/api/runs/${encodeURIComponent(id)}/events`, {
    message: (ev) => {
      tree.add(ev);
      const st = document.getElementById('run-state');
      if (st && (ev.type === 'final' || ev.type === 'run_failed') && !ev.parent) {
        const s = ev.type === 'final' ? 'done' : (ev.failure && ev.failure.kind === 'parked' ? 'parked' : 'failed');
        st.textContent = ` ${s}`; st.className = `state state-${s}`;
      }
    },
    cut: (d) => { cut.hidden = false; cut.textContent = `The timeline is cut at ${d.max} events.`; es.close(); },
    failure: (d) => { cut.hidden = false; cut.textContent = d.error; es.close(); },
  });
  // A reconnected stream replays the run from its start: the tree starts over.
  let opens = 0;
  es.onopen = () => {
    if (opens++ > 0) { list.replaceChildren(); tree = new RunTree(id, list, openFork); }
  };
  const renderAsks = () => asks.replaceChildren(...[...state.questions.values()].filter((q) => q.run === id).map(questionCard));
  renderAsks();
  // Who answered the run's questions: those recorded, then those answered while the page is open.
  const shown = new Set();
  const addAnswer = (a) => {
    if (shown.has(a.question)) return;
    shown.add(a.question);
    answered.append(h('p', { class: 'muted', 'data-answered': a.question },
      h('span', { class: 'kind' }, a.live ? 'asked' : 'parked'), `${{ accept: 'allowed', decline: 'declined', cancel: 'cancelled' }[a.action] || a.action} by ${a.by}`,
      a.call ? ` (call ${a.call})` : '', ` at ${fmtTime(a.time)}`));
  };
  get(`/api/runs/${encodeURIComponent(id)}/answers`).then(({ answers }) => answers.forEach(addAnswer)).catch(() => {});
  const stop = listen((m) => {
    if (m.kind === 'answered' && m.answer && m.answer.run === id && m.answer.by) addAnswer(m.answer);
    if (m.kind === 'question' || m.kind === 'questions' || m.kind === 'answered') renderAsks();
  });
  return () => { es.close(); stop(); };
}
