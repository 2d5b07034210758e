// An A2A 0.3 peer built with @a2a-js/sdk 0.3.14 (installed as
// "a2a-sdk-v03") for Switchboard's compatibility tests.
// Usage: node a2a-v03-server.mjs -> prints "LISTENING <port>".
// JSON-RPC at /, HTTP+JSON (REST) at /rest (its routes under /rest/v1/...),
// push notification configs in memory. Behaviour by the user's text:
//   ask...      input-required ("Which year?"); the next message completes
//               with "v03 answer: <text>"
//   chunks <n>  streams one artifact in n chunks (append, lastChunk)
//   slow        works until cancelled
//   anything    streams "v03 echo: <text>" in two artifact chunks
import express from 'express';
import { DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore } from 'a2a-sdk-v03/server';
import { A2AExpressApp, restHandler, UserBuilder } from 'a2a-sdk-v03/server/express';

const msgText = (m) => (m?.parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');
const now = () => new Date().toISOString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cancelled = new Set();

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const input = msgText(ctx.userMessage);
    if (!ctx.task) {
      bus.publish({ kind: 'task', id: taskId, contextId, status: { state: 'submitted', timestamp: now() }, history: [ctx.userMessage] });
    }
    const status = (state, text, final) => bus.publish({
      kind: 'status-update', taskId, contextId, final,
      status: { state, timestamp: now(), message: text ? { kind: 'message', role: 'agent', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }], taskId, contextId } : undefined },
    });
    if (ctx.task && ctx.task.status.state === 'input-required') {
      bus.publish({ kind: 'artifact-update', taskId, contextId, lastChunk: true, artifact: { artifactId: 'a', name: 'answer', parts: [{ kind: 'text', text: 'v03 answer: ' + input }] } });
      status('completed', undefined, true);
      bus.finished();
      return;
    }
    status('working', 'v03 working', false);
    const [word, rest] = [input.split(' ')[0], input.split(' ').slice(1).join(' ')];
    if (input.startsWith('ask')) {
      status('input-required', 'Which year?', true);
      bus.finished();
      return;
    }
    if (word === 'chunks') {
      const n = parseInt(rest, 10) || 3;
      for (let i = 0; i < n; i++) {
        await sleep(5);
        bus.publish({ kind: 'artifact-update', taskId, contextId, append: i > 0, lastChunk: i === n - 1,
          artifact: { artifactId: 'story', name: 'story', parts: [{ kind: 'text', text: `chunk${i};` }] } });
      }
    } else if (word === 'slow') {
      for (let i = 0; i < 600 && !cancelled.has(taskId); i++) await sleep(50);
      if (cancelled.has(taskId)) { bus.finished(); return; }
    } else {
      bus.publish({ kind: 'artifact-update', taskId, contextId, artifact: { artifactId: 'a', name: 'echo', parts: [{ kind: 'text', text: 'v03 echo: ' }] } });
      bus.publish({ kind: 'artifact-update', taskId, contextId, append: true, lastChunk: true, artifact: { artifactId: 'a', parts: [{ kind: 'text', text: input }] } });
    }
    status('completed', undefined, true);
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    cancelled.add(taskId);
    bus.publish({ kind: 'status-update', taskId, contextId: '', final: true, status: { state: 'canceled', timestamp: now() } });
    bus.finished();
  },
};

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  const base = `http://127.0.0.1:${port}`;
  const card = {
    name: 'v03-peer', description: 'An @a2a-js/sdk 0.3.14 test peer.', version: '0.3.0', protocolVersion: '0.3.0',
    url: `${base}/`, preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: `${base}/`, transport: 'JSONRPC' }, { url: `${base}/rest`, transport: 'HTTP+JSON' }],
    capabilities: { streaming: true, pushNotifications: true }, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'Echoes.', tags: ['test'] }],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor, undefined, new InMemoryPushNotificationStore());
  app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  new A2AExpressApp(handler).setupRoutes(app);
  process.stdout.write(`LISTENING ${port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
