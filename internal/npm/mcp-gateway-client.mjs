// An @modelcontextprotocol/sdk 1.32.2 (TypeScript SDK) client driving the
// switchboard MCP gateway for Switchboard's interop tests.
// Usage: node mcp-gateway-client.mjs stdio <command> [args...]
//        node mcp-gateway-client.mjs http <url> [bearer token]
// Lists the tools, calls mcp__everything__echo, then calls DENIED_TOOL (an
// environment variable) expecting a refusal, and prints one JSON line:
// {"tools": [...], "echo": "...", "deniedRefused": bool, "deniedDetail": "..."}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === 'stdio') {
  transport = new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: 'inherit' });
} else {
  const headers = rest[0] ? { Authorization: `Bearer ${rest[0]}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
}
const client = new Client({ name: 'ts-gateway-client', version: '1.0.0' });
const out = {};
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  out.tools = tools.map((t) => t.name);
  const res = await client.callTool({ name: 'mcp__everything__echo', arguments: { message: 'from-ts' } });
  out.echo = (res.content ?? []).map((c) => c.text ?? '').join('');
  out.echoError = !!res.isError;
  try {
    const d = await client.callTool({ name: process.env.DENIED_TOOL, arguments: {} });
    out.deniedRefused = !!d.isError;
    out.deniedDetail = JSON.stringify(d.content);
  } catch (e) {
    out.deniedRefused = true;
    out.deniedDetail = String(e?.message ?? e);
  }
} catch (e) {
  out.error = String(e?.stack ?? e);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(out.error ? 1 : 0);
