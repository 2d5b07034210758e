// The interop matrix's A2A 0.3 client (@a2a-js/sdk 0.3.14, installed as
// "a2a-sdk-v03"): every operation against an A2A server over one binding.
// Usage: node matrix-client-v03.mjs <baseURL> <JSONRPC|HTTP+JSON> <hookURL>
// The server is Switchboard's test worker (see matrix-client-v1.mjs).
// The "card" cell checks that the server's card offers the binding at
// protocol 0.3. Prints one JSON line per cell: {"op", "ok", "detail"} or
// {"op", "unsupported": reason}, then "DONE".
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from 'a2a-sdk-v03/client';
import { assert, cell, sleep, unsupported } from './matrix-cells.mjs';

const [base, binding, hook] = process.argv.slice(2);
const msg = (s, extra = {}) => ({ kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: s }], ...extra });
const partsText = (ps) => (ps ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');
const artText = (t) => (t.artifacts ?? []).map((a) => partsText(a.parts)).join('');

const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
  preferredTransports: [binding],
}));
const cardRes = await fetch(new URL('/.well-known/agent-card.json', base));
const card = await cardRes.json();
const offered = [{ url: card.url, transport: card.preferredTransport ?? 'JSONRPC' }, ...(card.additionalInterfaces ?? [])];
await cell('card', async () => {
  assert(card.name && card.protocolVersion?.startsWith('0.3'), 'not a 0.3 card: ' + JSON.stringify(card).slice(0, 300));
  const i = offered.find((i) => i.transport === binding);
  assert(i, `the card offers no ${binding} interface at protocol 0.3: ${JSON.stringify(offered)}`);
  return card.name + ' ' + i.url;
});
const client = await factory.createFromAgentCard(card);

let done;
await cell('send', async () => {
  const r = await client.sendMessage({ message: msg('hello matrix') });
  assert(r.kind === 'task' && r.status.state === 'completed', 'answer ' + JSON.stringify(r));
  assert(artText(r).includes('echo: hello matrix'), 'artifact ' + artText(r));
  done = r;
  return artText(r);
});
await cell('stream', async () => {
  const words = 'streamed in several chunks of the answer artifact';
  const chunks = [];
  let last;
  for await (const ev of client.sendMessageStream({ message: msg(words) })) {
    if (ev.kind === 'artifact-update') chunks.push(ev);
    last = ev;
  }
  assert(chunks.length >= 2, 'artifact chunks: ' + chunks.length);
  // The 0.3.14 REST client drops "append" when it converts an artifact
  // update from the wire (FromProto.taskArtifactUpdateEvent): there the
  // flags cannot be checked, only the chunks' order and lastChunk.
  const dropped = binding === 'HTTP+JSON' && chunks.every((c) => c.append === undefined);
  assert(dropped || (!chunks[0].append && chunks.slice(1).every((c) => c.append)), 'append flags ' + chunks.map((c) => c.append));
  assert(chunks[chunks.length - 1].lastChunk && chunks.slice(0, -1).every((c) => !c.lastChunk), 'lastChunk flags');
  const got = chunks.map((c) => partsText(c.artifact.parts)).join('');
  assert(got === 'echo: ' + words, 'reassembled ' + JSON.stringify(got));
  assert(last.kind === 'status-update' && last.status.state === 'completed', 'last ' + JSON.stringify(last));
  return chunks.length + ' chunks' + (dropped ? ' (append flags dropped by the 0.3.14 REST client)' : '');
});
await cell('get', async () => {
  const t = await client.getTask({ id: done.id });
  assert(t.id === done.id && t.status.state === 'completed', JSON.stringify(t.status));
  return t.id;
});
unsupported('list', 'A2A 0.3 has no ListTasks (tasks/list was added in 1.0); the 0.3 SDK client has no such method');
const slow = async () => {
  const r = await client.sendMessage({ message: msg('slow matrix'), configuration: { blocking: false } });
  assert(r.kind === 'task', 'not a task: ' + JSON.stringify(r));
  return r;
};
await cell('subscribe', async () => {
  const r = await slow();
  const kinds = [];
  let lastState;
  const sub = (async () => {
    for await (const ev of client.resubscribeTask({ id: r.id })) {
      kinds.push(ev.kind);
      if (ev.kind === 'status-update') lastState = ev.status.state;
    }
  })();
  for (let i = 0; i < 100 && kinds.length === 0; i++) await sleep(20);
  await client.cancelTask({ id: r.id });
  await sub;
  assert(kinds[0] === 'task', 'first subscribed event ' + kinds[0]);
  assert(lastState === 'canceled', 'last subscribed state ' + lastState);
  return kinds.join(',');
});
await cell('cancel', async () => {
  const r = await slow();
  const c = await client.cancelTask({ id: r.id });
  assert(c.id === r.id && c.status.state === 'canceled', 'cancel state ' + c.status.state);
  const t = await client.getTask({ id: r.id });
  assert(t.status.state === 'canceled', 'then ' + t.status.state);
  return c.status.state;
});
const pushTask = await slow().catch(() => undefined);
let cfg;
const needCfg = () => assert(cfg, 'no config from push-create');
await cell('push-create', async () => {
  assert(pushTask, 'no task');
  const c = await client.setTaskPushNotificationConfig({ taskId: pushTask.id, pushNotificationConfig: { id: 'cfg-1', url: hook, token: 'tok' } });
  assert(c.taskId === pushTask.id && c.pushNotificationConfig?.url === hook && c.pushNotificationConfig.id, 'created ' + JSON.stringify(c));
  cfg = c.pushNotificationConfig;
  return cfg.id;
});
await cell('push-get', async () => {
  needCfg();
  const g = await client.getTaskPushNotificationConfig({ id: pushTask.id, pushNotificationConfigId: cfg.id });
  assert(g.pushNotificationConfig?.id === cfg.id && g.pushNotificationConfig.url === hook, 'got ' + JSON.stringify(g));
  return g.pushNotificationConfig.id;
});
await cell('push-list', async () => {
  needCfg();
  const l = await client.listTaskPushNotificationConfig({ id: pushTask.id });
  assert(l.length === 1 && l[0].pushNotificationConfig?.id === cfg.id, 'listed ' + JSON.stringify(l));
  return l.length;
});
await cell('push-delete', async () => {
  needCfg();
  await client.deleteTaskPushNotificationConfig({ id: pushTask.id, pushNotificationConfigId: cfg.id });
  const l = await client.listTaskPushNotificationConfig({ id: pushTask.id });
  assert(Array.isArray(l), 'deleted, but the list of no configs answered ' + JSON.stringify(l) + ', not []');
  assert(l.length === 0, 'left ' + JSON.stringify(l));
  return 'deleted';
});
if (pushTask) await client.cancelTask({ id: pushTask.id }).catch(() => {});
await cell('unknown-task', async () => {
  try {
    await client.getTask({ id: 'no-such-task' });
  } catch (e) {
    assert(/TaskNotFound/.test(e?.constructor?.name) || /-32001/.test(String(e)), 'untyped error ' + e?.constructor?.name + ': ' + e);
    return e.constructor.name;
  }
  throw new Error('no error');
});
await cell('input-required', async () => {
  const r = await client.sendMessage({ message: msg('ask weather') });
  assert(r.kind === 'task' && r.status.state === 'input-required', 'state ' + r.status?.state);
  assert(partsText(r.status.message?.parts).includes('Which city'), 'question ' + partsText(r.status.message?.parts));
  const d = await client.sendMessage({ message: msg('Lyon', { taskId: r.id, contextId: r.contextId }) });
  assert(d.kind === 'task' && d.status.state === 'completed' && artText(d).includes('city=Lyon'), JSON.stringify(d).slice(0, 400));
  return artText(d);
});
process.stdout.write('DONE\n');
