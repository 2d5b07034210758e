// The console's API: JSON over fetch, live streams over EventSource.
const headers = { 'Content-Type': 'application/json', 'X-Switchboard-Console': '1' };

async function check(res) {
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

export const get = (path) => fetch(path, { credentials: 'same-origin' }).then(check);
export const post = (path, body) =>
  fetch(path, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'same-origin' }).then(check);

// stream opens an EventSource; handlers maps event names to functions of the parsed data.
export function stream(path, handlers) {
  const es = new EventSource(path);
  for (const [name, fn] of Object.entries(handlers)) {
    es.addEventListener(name, (e) => fn(JSON.parse(e.data)));
  }
  return es;
}

export function answer(id, action, extra = {}) {
  return post(`/api/questions/${encodeURIComponent(id)}/answer`, { action, ...extra });
}
