// An A2A 0.3 peer built with @a2a-js/sdk 0.3.14 (installed as
// "a2a-sdk-v03") for Switchboard's compatibility test.
// Usage: node a2a-v03-server.mjs -> prints "LISTENING <port>".
// It streams "v03 echo: <text>" in two artifact chunks, or asks for input
// when the text starts with "ask".
import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from 'a2a-sdk-v03/server';
import { A2AExpressApp } from 'a2a-sdk-v03/server/express';

const msgText = (m) => (m?.parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');
const now = () => new Date().toISOString();

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
    if (input.startsWith('ask')) {
      status('input-required', 'Which year?', true);
      bus.finished();
      return;
    }
    bus.publish({ kind: 'artifact-update', taskId, contextId, artifact: { artifactId: 'a', name: 'echo', parts: [{ kind: 'text', text: 'v03 echo: ' }] } });
    bus.publish({ kind: 'artifact-update', taskId, contextId, append: true, lastChunk: true, artifact: { artifactId: 'a', parts: [{ kind: 'text', text: input }] } });
    status('completed', undefined, true);
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish({ kind: 'status-update', taskId, contextId: '', final: true, status: { state: 'canceled', timestamp: now() } });
    bus.finished();
  },
};

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  const card = {
    name: 'v03-peer', description: 'An @a2a-js/sdk 0.3.14 test peer.', version: '0.3.0', protocolVersion: '0.3.0',
    url: `http://127.0.0.1:${port}/`, preferredTransport: 'JSONRPC',
    capabilities: { streaming: true, pushNotifications: false }, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'Echoes.', tags: ['test'] }],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  new A2AExpressApp(handler).setupRoutes(app);
  process.stdout.write(`LISTENING ${port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
