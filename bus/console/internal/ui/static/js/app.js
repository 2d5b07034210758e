// The console's router: #/ runs, #/run/<id>, #/inbox, #/chat.
import { get, stream } from './api.js';
import { runsPage } from './runs.js';
import { runPage } from './run.js';
import { inboxPage, setCount } from './inbox.js';
import { chatPage } from './chat.js';

export const state = { info: {}, questions: new Map(), listeners: new Set() };
const main = document.getElementById('main');
let cleanup = () => {};

// The live stream of runs and questions: every page listens through state.listeners.
function connectLive() {
  const dot = document.getElementById('live');
  const es = stream('/api/live', {
    hello: () => { dot.classList.add('on'); loadQuestions(); for (const l of state.listeners) l({ kind: 'reload' }); },
    message: (m) => {
      if (m.kind === 'question') state.questions.set(m.question.id, m.question);
      if (m.kind === 'answered') state.questions.delete(m.answer.question);
      setCount(state.questions.size);
      for (const l of state.listeners) l(m);
    },
  });
  es.onerror = () => dot.classList.remove('on');
}

export async function loadQuestions() {
  const { questions } = await get('/api/questions');
  state.questions = new Map(questions.map((q) => [q.id, q]));
  setCount(state.questions.size);
  for (const l of state.listeners) l({ kind: 'questions' });
}

export function listen(fn) { state.listeners.add(fn); return () => state.listeners.delete(fn); }

function route() {
  cleanup();
  main.replaceChildren();
  const hash = location.hash || '#/';
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.remove('on');
  let m;
  if ((m = hash.match(/^#\/run\/([^/]+)$/))) cleanup = runPage(main, decodeURIComponent(m[1]));
  else if (hash === '#/inbox') { nav('inbox'); cleanup = inboxPage(main); }
  else if (hash === '#/chat') { nav('chat'); cleanup = chatPage(main); }
  else { nav('runs'); cleanup = runsPage(main); }
  cleanup = cleanup || (() => {});
}
const nav = (n) => document.querySelector(`[data-nav="${n}"]`).classList.add('on');

get('/api/info').then((info) => {
  state.info = info;
  document.getElementById('who').textContent = `answering as ${info.identity}`;
  connectLive();
  window.addEventListener('hashchange', route);
  route();
});
