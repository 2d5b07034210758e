// The interop matrix's @a2a-js/sdk 1.3.0 client: every operation against an
// A2A server over one binding. Usage:
//   node matrix-client-v1.mjs <baseURL> <JSONRPC|HTTP+JSON> <hookURL>
// The server is Switchboard's test worker: "ask X" asks "Which city for X?",
// "slow X" runs until cancelled, anything else answers "echo: <text>".
// Prints one JSON line per cell: {"op", "ok", "detail"}, then "DONE".
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { TaskState, Role } from '@a2a-js/sdk';
import { assert, cell, sleep } from './matrix-cells.mjs';

const [base, binding, hook] = process.argv.slice(2);
const text = (s) => ({ content: { $case: 'text', value: s }, metadata: undefined, filename: '', mediaType: '' });
const msg = (s, extra = {}) => ({
  messageId: crypto.randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [text(s)],
  metadata: undefined, extensions: [], referenceTaskIds: [], ...extra,
});
const noWait = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true };
const req = (m, cfg) => ({ tenant: '', message: m, configuration: cfg, metadata: undefined });
const partsText = (ps) => (ps ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const artText = (t) => (t.artifacts ?? []).map((a) => partsText(a.parts)).join('');
const isTask = (r) => r && typeof r === 'object' && 'status' in r && 'id' in r;

const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
  preferredTransports: [binding],
}));
let client;
await cell('card', async () => {
  client = await factory.createFromUrl(base);
  const card = await client.getAgentCard();
  const i = card.supportedInterfaces.find((i) => i.protocolBinding === binding && i.protocolVersion.startsWith('1.'));
  assert(card.name && i, 'no 1.0 ' + binding + ' interface: ' + JSON.stringify(card.supportedInterfaces));
  return card.name + ' ' + i.url;
});
if (!client) { process.stdout.write('DONE\n'); process.exit(0); }

let done;
await cell('send', async () => {
  const r = await client.sendMessage(req(msg('hello matrix')));
  assert(isTask(r) && r.status.state === TaskState.TASK_STATE_COMPLETED, 'answer ' + JSON.stringify(r));
  assert(artText(r).includes('echo: hello matrix'), 'artifact ' + artText(r));
  done = r;
  return artText(r);
});
await cell('stream', async () => {
  const words = 'streamed in several chunks of the answer artifact';
  const chunks = [];
  let last;
  for await (const ev of client.sendMessageStream(req(msg(words)))) {
    if (ev.payload?.$case === 'artifactUpdate') chunks.push(ev.payload.value);
    last = ev.payload;
  }
  assert(chunks.length >= 2, 'artifact chunks: ' + chunks.length);
  assert(!chunks[0].append && chunks.slice(1).every((c) => c.append), 'append flags ' + chunks.map((c) => c.append));
  assert(chunks[chunks.length - 1].lastChunk, 'no lastChunk');
  const got = chunks.map((c) => partsText(c.artifact.parts)).join('');
  assert(got === 'echo: ' + words, 'reassembled ' + JSON.stringify(got));
  assert(last.$case === 'statusUpdate' && last.value.status.state === TaskState.TASK_STATE_COMPLETED, 'last ' + JSON.stringify(last));
  return chunks.length + ' chunks';
});
await cell('get', async () => {
  const t = await client.getTask({ tenant: '', id: done.id, historyLength: undefined });
  assert(t.id === done.id && t.status.state === TaskState.TASK_STATE_COMPLETED, JSON.stringify(t.status));
  return t.id;
});
await cell('list', async () => {
  const l = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 50, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false });
  assert(l.tasks.some((t) => t.id === done.id), 'task not listed among ' + l.tasks.length);
  return l.tasks.length;
});
const slow = async () => {
  const r = await client.sendMessage(req(msg('slow matrix'), noWait));
  assert(isTask(r), 'not a task');
  return r;
};
await cell('subscribe', async () => {
  const r = await slow();
  const kinds = [];
  let lastState;
  const sub = (async () => {
    for await (const ev of client.resubscribeTask({ tenant: '', id: r.id })) {
      kinds.push(ev.payload?.$case);
      if (ev.payload?.$case === 'statusUpdate') lastState = ev.payload.value.status.state;
    }
  })();
  for (let i = 0; i < 100 && kinds.length === 0; i++) await sleep(20);
  await client.cancelTask({ tenant: '', id: r.id, metadata: undefined });
  await sub;
  assert(kinds[0] === 'task', 'first subscribed event ' + kinds[0]);
  assert(lastState === TaskState.TASK_STATE_CANCELED, 'last subscribed state ' + lastState);
  return kinds.join(',');
});
await cell('cancel', async () => {
  const r = await slow();
  const c = await client.cancelTask({ tenant: '', id: r.id, metadata: undefined });
  assert(c.id === r.id && c.status.state === TaskState.TASK_STATE_CANCELED, 'cancel state ' + c.status.state);
  const t = await client.getTask({ tenant: '', id: r.id, historyLength: undefined });
  assert(t.status.state === TaskState.TASK_STATE_CANCELED, 'then ' + t.status.state);
  return c.status.state;
});
const pushTask = await slow().catch(() => undefined);
let cfg;
const needCfg = () => assert(cfg, 'no config from push-create');
await cell('push-create', async () => {
  assert(pushTask, 'no task');
  cfg = await client.createTaskPushNotificationConfig({ tenant: '', id: 'cfg-1', taskId: pushTask.id, url: hook, token: 'tok', authentication: undefined });
  assert(cfg.id && cfg.url === hook && cfg.taskId === pushTask.id, 'created ' + JSON.stringify(cfg));
  return cfg.id;
});
await cell('push-get', async () => {
  needCfg();
  const g = await client.getTaskPushNotificationConfig({ tenant: '', taskId: pushTask.id, id: cfg.id });
  assert(g.id === cfg.id && g.url === hook, 'got ' + JSON.stringify(g));
  return g.id;
});
await cell('push-list', async () => {
  needCfg();
  const l = await client.listTaskPushNotificationConfig({ tenant: '', taskId: pushTask.id, pageSize: 0, pageToken: '' });
  assert(l.configs.length === 1 && l.configs[0].id === cfg.id, 'listed ' + JSON.stringify(l));
  return l.configs.length;
});
await cell('push-delete', async () => {
  needCfg();
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: pushTask.id, id: cfg.id });
  const l = await client.listTaskPushNotificationConfig({ tenant: '', taskId: pushTask.id, pageSize: 0, pageToken: '' });
  assert(l.configs.length === 0, 'left ' + JSON.stringify(l));
  return 'deleted';
});
if (pushTask) await client.cancelTask({ tenant: '', id: pushTask.id, metadata: undefined }).catch(() => {});
await cell('unknown-task', async () => {
  try {
    await client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined });
  } catch (e) {
    assert(/TaskNotFound/.test(e?.constructor?.name) || e?.code === -32001, 'untyped error ' + e?.constructor?.name + ': ' + e);
    return e.constructor.name;
  }
  throw new Error('no error');
});
await cell('input-required', async () => {
  const r = await client.sendMessage(req(msg('ask weather')));
  assert(r.status.state === TaskState.TASK_STATE_INPUT_REQUIRED, 'state ' + r.status.state);
  assert(partsText(r.status.message?.parts).includes('Which city'), 'question ' + partsText(r.status.message?.parts));
  const d = await client.sendMessage(req(msg('Lyon', { taskId: r.id, contextId: r.contextId })));
  assert(d.status.state === TaskState.TASK_STATE_COMPLETED && artText(d).includes('city=Lyon'), artText(d));
  return artText(d);
});
process.stdout.write('DONE\n');
