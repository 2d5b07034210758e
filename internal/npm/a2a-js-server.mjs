// A2A 1.0 peer built with @a2a-js/sdk 1.3.0 for Switchboard's interop tests.
// Usage: node a2a-js-server.mjs [compat] [sign=<private JWK JSON>] -> prints
// "LISTENING <port>" on stdout. With "compat" the SDK's v0.3 compatibility
// layer is enabled on the card, JSON-RPC and REST handlers, and the card
// lists 0.3 interfaces too. With "sign=" the card is served signed by the
// SDK's generateAgentCardSignature (ES256, kid from the JWK, typ JOSE).
// Push notification configs are kept in memory (pushNotifications: true).
// Behaviour by the first word of the user's text:
//   chunks <n>  streams one artifact in n chunks (append, lastChunk), completes
//   slow        works until cancelled
//   ask         input-required; the next message completes with "answer: <text>"
//   anything    completes with an artifact "echo: <text>"
import express from 'express';
import { AgentEvent, DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { TaskState, Role, generateAgentCardSignature } from '@a2a-js/sdk';

const text = (s) => ({ content: { $case: 'text', value: s }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const msgText = (m) => (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const agentMsg = (taskId, contextId, s) => ({
  messageId: crypto.randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [text(s)],
  metadata: undefined, extensions: [], referenceTaskIds: [],
});
const status = (taskId, contextId, state, m) => AgentEvent.statusUpdate({
  taskId, contextId, metadata: undefined,
  status: { state, message: m ? agentMsg(taskId, contextId, m) : undefined, timestamp: new Date().toISOString() },
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const cancelled = new Set();

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const input = msgText(ctx.userMessage);
    if (!ctx.task) {
      bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [], history: [ctx.userMessage], metadata: undefined }));
    }
    if (ctx.task && ctx.task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      bus.publish(AgentEvent.task({ ...ctx.task, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() } }));
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: false, lastChunk: true, metadata: undefined,
        artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [text('answer: ' + input)], metadata: undefined, extensions: [] } }));
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED));
      bus.finished();
      return;
    }
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING, 'working on it'));
    const [word, rest] = [input.split(' ')[0], input.split(' ').slice(1).join(' ')];
    if (word === 'chunks') {
      const n = parseInt(rest, 10) || 3;
      for (let i = 0; i < n; i++) {
        await sleep(5);
        bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: i > 0, lastChunk: i === n - 1, metadata: undefined,
          artifact: { artifactId: 'story', name: 'story', description: '', parts: [text(`chunk${i};`)], metadata: undefined, extensions: [] } }));
      }
    } else if (word === 'slow') {
      for (let i = 0; i < 600 && !cancelled.has(taskId); i++) await sleep(50);
      if (cancelled.has(taskId)) { bus.finished(); return; }
    } else if (word === 'ask') {
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, 'Which city?'));
      bus.finished();
      return;
    } else {
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: false, lastChunk: true, metadata: undefined,
        artifact: { artifactId: 'echo', name: 'echo', description: '', parts: [text('echo: ' + input)], metadata: undefined, extensions: [] } }));
    }
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED));
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    cancelled.add(taskId);
    bus.publish(status(taskId, '', TaskState.TASK_STATE_CANCELED, 'cancelled'));
    bus.finished();
  },
};

const compat = process.argv.includes('compat');
const signArg = process.argv.find((a) => a.startsWith('sign='));
const signJwk = signArg ? JSON.parse(signArg.slice('sign='.length)) : undefined;
const app = express();
const server = app.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  const base = `http://127.0.0.1:${port}`;
  const card = {
    name: 'js-peer', description: 'An @a2a-js/sdk 1.3.0 test peer.', version: '1.0.0',
    supportedInterfaces: [
      { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      ...(compat ? [
        { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
        { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '0.3' },
      ] : []),
    ],
    provider: undefined, capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'Echoes, streams chunks, asks.', tags: ['test'], examples: ['chunks 3'], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const served = signJwk ? await generateAgentCardSignature(signJwk, { alg: 'ES256', kid: signJwk.kid, typ: 'JOSE' })(card) : card;
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor, undefined, new InMemoryPushNotificationStore());
  const legacyCompat = compat ? { enabled: true } : undefined;
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => served, legacyCompat }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  process.stdout.write(`LISTENING ${port}\n`);
});
process.stdin.on('end', () => process.exit(0)); // exit with the parent
process.stdin.resume();
