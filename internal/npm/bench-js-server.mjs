// An @a2a-js/sdk 1.3.0 echo agent for Switchboard's A2A server benchmark.
// Usage: node bench-js-server.mjs -> prints "LISTENING <port>"; JSON-RPC at
// /a2a/jsonrpc. Each message completes a task with an "echo: <text>"
// artifact.
import express from 'express';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { TaskState } from '@a2a-js/sdk';

const text = (s) => ({ content: { $case: 'text', value: s }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const input = (ctx.userMessage.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [], history: [ctx.userMessage], metadata: undefined }));
    bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: false, lastChunk: true, metadata: undefined,
      artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [text('echo: ' + input)], metadata: undefined, extensions: [] } }));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined,
      status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() } }));
    bus.finished();
  },
  async cancelTask() {},
};
const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  const card = {
    name: 'js-echo', description: 'echo', version: '1.0.0',
    supportedInterfaces: [{ url: `http://127.0.0.1:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined, capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [], signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  process.stdout.write(`LISTENING ${port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
