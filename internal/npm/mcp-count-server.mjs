// A stdio MCP server on @modelcontextprotocol/sdk 1.32.2 for Switchboard's
// gateway benchmark: "echo" answers its text and counts the calls it
// received; "count" answers that count (so a benchmark's arithmetic can be
// checked against what the server really received).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

let calls = 0;
const server = new McpServer({ name: 'count', version: '1.0.0' });
server.tool('echo', 'Echoes its text', { text: z.string() }, async ({ text }) => {
  calls++;
  return { content: [{ type: 'text', text }] };
});
server.tool('count', 'The number of echo calls received', {}, async () => ({
  content: [{ type: 'text', text: String(calls) }],
}));
await server.connect(new StdioServerTransport());
