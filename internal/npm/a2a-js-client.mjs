// An @a2a-js/sdk 1.3.0 client driving an A2A server for Switchboard's
// interop tests. Usage: node a2a-js-client.mjs <baseURL> <JSONRPC|HTTP+JSON>
// Prints one JSON line per check: {"check": ..., "ok": bool, "detail": ...},
// then "DONE".
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { TaskState, Role } from '@a2a-js/sdk';

const [base, binding] = process.argv.slice(2);
const report = (check, ok, detail) => process.stdout.write(JSON.stringify({ check, ok: !!ok, detail }) + '\n');
const text = (s) => ({ content: { $case: 'text', value: s }, metadata: undefined, filename: '', mediaType: '' });
const msg = (s, extra = {}) => ({
  messageId: crypto.randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [text(s)],
  metadata: undefined, extensions: [], referenceTaskIds: [], ...extra,
});
const req = (m, cfg) => ({ tenant: '', message: m, configuration: cfg, metadata: undefined });
const partsText = (ps) => (ps ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const artText = (t) => (t.artifacts ?? []).map((a) => partsText(a.parts)).join('');
const isTask = (r) => r && typeof r === 'object' && 'status' in r && 'id' in r;

async function check(name, fn) {
  try {
    const detail = await fn();
    report(name, true, detail);
  } catch (e) {
    report(name, false, String(e?.stack ?? e));
  }
}
const assert = (c, m) => { if (!c) throw new Error(m); };

const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
  preferredTransports: [binding],
}));
const client = await factory.createFromUrl(base);

let doneTask;
await check('send', async () => {
  const r = await client.sendMessage(req(msg('hello from js')));
  assert(isTask(r), 'not a task: ' + JSON.stringify(r));
  assert(r.status.state === TaskState.TASK_STATE_COMPLETED, 'state ' + r.status.state);
  assert(artText(r).includes('echo: hello from js'), 'artifact ' + artText(r));
  doneTask = r;
  return artText(r);
});
await check('stream', async () => {
  const kinds = [];
  let progress = 0;
  let last;
  for await (const ev of client.sendMessageStream(req(msg('research streams')))) {
    const c = ev.payload?.$case;
    kinds.push(c);
    if (c === 'statusUpdate' && partsText(ev.payload.value.status?.message?.parts).startsWith('research: ')) progress++;
    last = ev.payload;
  }
  assert(kinds[0] === 'task', 'first event ' + kinds[0]);
  assert(kinds.includes('artifactUpdate'), 'no artifact update: ' + kinds);
  assert(progress === 2, 'tool progress updates: ' + progress);
  assert(last.$case === 'statusUpdate' && last.value.status.state === TaskState.TASK_STATE_COMPLETED, 'last ' + JSON.stringify(last));
  return kinds.join(',');
});
await check('stream-chunks', async () => {
  const words = 'streamed in several chunks of the answer artifact';
  const chunks = [];
  for await (const ev of client.sendMessageStream(req(msg(words)))) {
    if (ev.payload?.$case === 'artifactUpdate') chunks.push(ev.payload.value);
  }
  assert(chunks.length >= 2, 'artifact chunks: ' + chunks.length);
  assert(!chunks[0].append && chunks.slice(1).every((c) => c.append), 'append flags ' + chunks.map((c) => c.append));
  assert(chunks[chunks.length - 1].lastChunk && chunks.slice(0, -1).every((c) => !c.lastChunk), 'lastChunk flags');
  const text = chunks.map((c) => partsText(c.artifact.parts)).join('');
  assert(text === 'echo: ' + words, 'assembled ' + JSON.stringify(text));
  return chunks.length + ' chunks';
});
await check('get', async () => {
  const t = await client.getTask({ tenant: '', id: doneTask.id, historyLength: undefined });
  assert(t.id === doneTask.id && t.status.state === TaskState.TASK_STATE_COMPLETED, JSON.stringify(t.status));
  return t.id;
});
await check('list', async () => {
  const l = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 10, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: true });
  assert(l.tasks.some((t) => t.id === doneTask.id), 'task not listed');
  return l.tasks.length;
});
await check('cancel+subscribe', async () => {
  const r = await client.sendMessage(req(msg('slow work'), { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true }));
  assert(isTask(r), 'not a task');
  const kinds = [];
  let lastState;
  const sub = (async () => {
    for await (const ev of client.resubscribeTask({ tenant: '', id: r.id })) {
      kinds.push(ev.payload?.$case);
      if (ev.payload?.$case === 'statusUpdate') lastState = ev.payload.value.status.state;
    }
  })();
  await new Promise((res) => setTimeout(res, 200));
  const c = await client.cancelTask({ tenant: '', id: r.id, metadata: undefined });
  assert(c.status.state === TaskState.TASK_STATE_CANCELED, 'cancel state ' + c.status.state);
  await sub;
  assert(kinds[0] === 'task', 'first subscribed event ' + kinds[0]);
  assert(lastState === TaskState.TASK_STATE_CANCELED, 'last subscribed state ' + lastState);
  return kinds.join(',');
});
await check('input-required', async () => {
  const r = await client.sendMessage(req(msg('ask weather')));
  assert(r.status.state === TaskState.TASK_STATE_INPUT_REQUIRED, 'state ' + r.status.state);
  const done = await client.sendMessage(req(msg('Lyon', { taskId: r.id, contextId: r.contextId })));
  assert(done.status.state === TaskState.TASK_STATE_COMPLETED && artText(done).includes('city=Lyon'), artText(done));
  return artText(done);
});
await check('task-not-found', async () => {
  try {
    await client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined });
  } catch (e) {
    assert(/not found/i.test(String(e?.message ?? e)) || e?.code === -32001, 'wrong error ' + e);
    return String(e?.constructor?.name) + ': ' + e.message;
  }
  throw new Error('no error');
});
process.stdout.write('DONE\n');
