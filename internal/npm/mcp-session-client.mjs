// An @modelcontextprotocol/sdk 1.32.2 (TypeScript SDK) client driving
// replicas of the switchboard MCP gateway behind a load balancer without
// affinity, for cmd/switchboard's TestReplicaSessions.
// Usage: node mcp-session-client.mjs <url>
// Phase 1: initializes a stateful session, lists, calls
// mcp__everything__trigger-elicitation-request (answering the elicitation)
// and mcp__everything__trigger-long-running-operation (counting progress),
// then prints {"phase":"ready","session":...,"tools":n,"elicited":...,"progress":n}
// and waits for a line on stdin (the test kills the session's owner).
// Phase 2: calls again, expecting a 404 (the owner is gone), initializes a
// new session and calls again; prints {"phase":"done",...}.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const url = new URL(process.argv[2]);
let answered = 0;

async function connect() {
  const client = new Client({ name: 'ts-session-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    answered++;
    return { action: 'accept', content: { name: 'Ada' } };
  });
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  return { client, transport };
}

async function elicit(client) {
  const res = await client.callTool({ name: 'mcp__everything__trigger-elicitation-request', arguments: {} }, undefined, { timeout: 30000 });
  return (res.content ?? []).map((c) => c.text ?? '').join('\n');
}

async function progress(client) {
  let n = 0;
  await client.callTool({ name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
    undefined, { timeout: 30000, onprogress: () => { n++; } });
  return n;
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const out = {};
let conn;
try {
  conn = await connect();
  out.phase = 'ready';
  out.session = conn.transport.sessionId;
  out.tools = (await conn.client.listTools()).tools.length;
  out.elicited = await elicit(conn.client);
  out.progress = await progress(conn.client);
  out.answered = answered;
  process.stdout.write(JSON.stringify(out) + '\n');
  await lines.next();
  const done = { phase: 'done' };
  try {
    await conn.client.listTools();
    done.error = 'a request after the owner was killed succeeded';
  } catch (e) {
    done.lostStatus = e?.code ?? 0;
    done.lostDetail = String(e?.message ?? e);
  }
  await conn.client.close().catch(() => {});
  conn = await connect();
  done.session = conn.transport.sessionId;
  done.elicited = await elicit(conn.client);
  done.progress = await progress(conn.client);
  process.stdout.write(JSON.stringify(done) + '\n');
} catch (e) {
  process.stdout.write(JSON.stringify({ phase: 'failed', error: String(e?.stack ?? e) }) + '\n');
  process.exitCode = 1;
} finally {
  await conn?.client.close().catch(() => {});
}
process.exit(process.exitCode ?? 0);
