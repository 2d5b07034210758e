// An @a2a-js/sdk 0.3.14 client (installed as "a2a-sdk-v03") for
// Switchboard's interop tests. Usage: node a2a-v03-client.mjs <baseURL>
// [preferred transport]. It reads the card, picks a transport as the SDK
// does (the preferred one if the card offers it, else the card's), sends
// one message and gets its task back. Prints one JSON line:
// {"transport": ..., "state": ..., "text": ...}, or {"error": ...}.
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from 'a2a-sdk-v03/client';

const [base, preferred] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
try {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
    preferredTransports: preferred ? [preferred] : undefined,
  }));
  const client = await factory.createFromUrl(base);
  const sent = await client.sendMessage({
    message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text: 'hello from js 0.3' }] },
  });
  const task = await client.getTask({ id: sent.id });
  const text = (task.artifacts ?? []).flatMap((a) => a.parts).map((p) => (p.kind === 'text' ? p.text : '')).join('');
  out({ transport: client.transport?.constructor?.name, state: task.status.state, text });
} catch (e) {
  out({ error: String(e?.stack ?? e) });
}
