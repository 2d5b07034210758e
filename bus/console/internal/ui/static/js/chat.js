// The chat: start a run of the console's agent, then follow it.
import { post } from './api.js';
import { h } from './dom.js';
import { state } from './app.js';

export function chatPage(main) {
  const input = h('textarea', { id: 'chat-input', placeholder: 'Ask the agent…' });
  const err = h('p', { class: 'error', id: 'chat-error' });
  const start = h('button', { class: 'primary', id: 'chat-send' }, 'Start run');
  start.onclick = async () => {
    err.textContent = '';
    try {
      const { run } = await post('/api/runs', { input: input.value });
      location.hash = `#/run/${encodeURIComponent(run)}`;
    } catch (e) { err.textContent = e.message; }
  };
  if (!state.info.can_start) {
    main.append(h('h2', {}, 'Chat'), h('p', { class: 'muted' }, 'This console has no agent to run (it watches the bus only).'));
    return;
  }
  main.append(h('h2', {}, `Chat with ${state.info.runner}`), h('div', { class: 'card' }, input, h('div', { class: 'row' }, start), err));
  input.focus();
}
