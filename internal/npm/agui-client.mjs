// The official AG-UI client (@ag-ui/client HttpAgent) against a Switchboard
// agent/agui Handler at argv[2]: a run that asks to approve a tool call
// (RUN_FINISHED with an interrupt outcome), then the resume that approves
// it. Every event received is validated with @ag-ui/core's zod schemas
// (EventSchemas). Prints one JSON summary line.
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";

const url = process.argv[2];
const agent = new HttpAgent({ url, threadId: "thread-1" });
const runs = [];
let current = [];
const invalid = [];
agent.subscribe({
  onEvent({ event }) {
    const r = EventSchemas.safeParse(event);
    if (!r.success) invalid.push({ type: event.type, issues: r.error.issues });
    current.push(event);
  },
});

agent.addMessage({ id: "m1", role: "user", content: "note milk" });
await agent.runAgent({ runId: "run-1" });
runs.push(current);
current = [];
const interrupts = agent.pendingInterrupts;
if (interrupts.length !== 1) {
  console.log(JSON.stringify({ error: "want one pending interrupt", interrupts, runs }));
  process.exit(1);
}
const resume = interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } }));
await agent.runAgent({ runId: "run-2", resume });
runs.push(current);

const toolMessages = agent.messages.filter((m) => m.role === "tool").map((m) => m.content);
const assistant = agent.messages.filter((m) => m.role === "assistant").map((m) => m.content ?? "");
console.log(JSON.stringify({
  runs: runs.map((evs) => evs.map((e) => e.type)),
  outcomes: runs.map((evs) => evs.at(-1)?.outcome?.type ?? null),
  interrupt: interrupts[0],
  toolMessages,
  assistant,
  invalid,
  pending: agent.pendingInterrupts.length,
}));
