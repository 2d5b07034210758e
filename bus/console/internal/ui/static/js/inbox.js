// The inbox: questions waiting for a person, live and parked, answered here.
import { answer } from './api.js';
import { h, fmtTime, pretty } from './dom.js';
import { state, listen } from './app.js';

export function setCount(n) {
  const b = document.getElementById('inbox-count');
  b.textContent = n; b.hidden = !n;
}

// questionCard renders one question with its answer buttons.
export function questionCard(q) {
  const err = h('span', { class: 'error' });
  const reason = h('input', { placeholder: 'reason (optional)', 'data-field': 'reason' });
  const text = q.kind === 'permission' ? null : h('input', { placeholder: 'answer', 'data-field': 'text' });
  const send = (action) => async () => {
    try {
      const extra = { reason: reason.value || undefined };
      if (text && action === 'accept') extra.content = { text: text.value };
      await answer(q.id, action, extra);
      card.replaceChildren(h('span', { class: 'muted' }, `${action} sent as ${state.info.identity}`));
    } catch (e) { err.textContent = e.message; }
  };
  const card = h('div', { class: 'card question', 'data-question-id': q.id, 'data-kind': q.kind },
    h('div', { class: 'node-head' }, h('span', { class: 'kind' }, q.live ? 'live' : 'parked'), h('strong', {}, q.message || q.kind),
      q.run ? h('a', { href: `#/run/${encodeURIComponent(q.run)}` }, q.run) : null, h('span', { class: 'muted' }, fmtTime(q.created))),
    q.tool ? h('div', {}, 'tool ', h('code', {}, q.tool), q.source ? h('span', { class: 'tag' }, q.source) : null) : null,
    q.args ? h('pre', {}, pretty(q.args)) : null,
    q.url ? h('div', {}, 'open ', h('a', { href: q.url, target: '_blank', rel: 'noopener' }, q.url)) : null,
    h('div', { class: 'row' }, text,
      h('button', { class: 'primary', 'data-action': 'accept', onclick: send('accept') }, q.kind === 'permission' ? 'Allow' : 'Answer'),
      h('button', { class: 'danger', 'data-action': 'decline', onclick: send('decline') }, q.kind === 'permission' ? 'Deny' : 'Decline'),
      reason, err));
  return card;
}

export function inboxPage(main) {
  const list = h('div', { id: 'inbox' });
  main.append(h('h2', {}, 'Inbox'), list);
  const render = () => {
    list.replaceChildren(...[...state.questions.values()].map(questionCard));
    if (!state.questions.size) list.append(h('p', { class: 'muted' }, 'No question waits.'));
  };
  render();
  return listen(render);
}
