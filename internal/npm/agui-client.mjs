// The official AG-UI client (@ag-ui/client HttpAgent) against a Switchboard
// agent/agui Handler at argv[2], in the mode argv[3]:
//   - "approval" (the default): a run that asks to approve a tool call
//     (RUN_FINISHED with an interrupt outcome), then the resume that
//     approves it;
//   - "frontend": a run offered a frontend tool (RunAgentInput.tools) that
//     the model calls: the run finishes with the call pending, the client
//     runs the tool and its next run, whose messages end with the tool
//     message, continues the conversation (sent to argv[4] when given: another
//     replica, where no run waits for the result);
//   - "history": one run of a conversation of many messages (system,
//     user, assistant with a tool call, tool, user) with context and state.
// Every event received is validated with @ag-ui/core's zod schemas
// (EventSchemas). Prints one JSON summary line.
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";

const url = process.argv[2];
const mode = process.argv[3] ?? "approval";
const runs = [];
let current = [];
const invalid = [];
const watch = (agent) =>
  agent.subscribe({
    onEvent({ event }) {
      const r = EventSchemas.safeParse(event);
      if (!r.success) invalid.push({ type: event.type, issues: r.error.issues });
      current.push(event);
    },
  });
const summary = (agent, extra) => ({
  runs: runs.map((evs) => evs.map((e) => e.type)),
  outcomes: runs.map((evs) => evs.at(-1)?.outcome?.type ?? null),
  toolMessages: agent.messages.filter((m) => m.role === "tool").map((m) => m.content),
  assistant: agent.messages.filter((m) => m.role === "assistant").map((m) => m.content ?? ""),
  state: agent.state,
  invalid,
  ...extra,
});

if (mode === "frontend") {
  const agent = new HttpAgent({ url, threadId: "thread-frontend", initialState: { theme: "dark" } });
  watch(agent);
  const tools = [{
    name: "pick_color",
    description: "Ask the user to pick a color in the page.",
    parameters: { type: "object", properties: { hint: { type: "string" } } },
  }];
  const context = [{ description: "the user's name", value: "Ada" }];
  agent.addMessage({ id: "m1", role: "user", content: "which color do I like?" });
  let pending = [];
  agent.subscribe({ onRunFinishedEvent({ pendingToolCallIds }) { pending = pendingToolCallIds ?? []; } });
  await agent.runAgent({ runId: "run-1", tools, context });
  runs.push(current);
  current = [];
  const firstPending = [...pending];
  const call = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === firstPending[0]);
  if (!call) {
    console.log(JSON.stringify({ error: "no pending call of a frontend tool", runs, messages: agent.messages }));
    process.exit(1);
  }
  // The application runs its tool and answers the call.
  const args = JSON.parse(call.function.arguments);
  agent.addMessage({ id: "t1", role: "tool", toolCallId: call.id, content: `teal (asked: ${args.hint})` });
  if (process.argv[4]) agent.url = process.argv[4];
  await agent.runAgent({ runId: "run-2", tools, context });
  runs.push(current);
  console.log(JSON.stringify(summary(agent, { pending: firstPending, call: call.function.name, pendingAfter: pending })));
  process.exit(0);
}

if (mode === "history") {
  const agent = new HttpAgent({
    url, threadId: "thread-history", initialState: { cart: ["milk"] },
    initialMessages: [
      { id: "s1", role: "system", content: "Answer in French." },
      { id: "u1", role: "user", content: "my name is Ada" },
      { id: "a1", role: "assistant", content: "Noted.", toolCalls: [{ id: "c1", type: "function", function: { name: "remember", arguments: "{\"name\":\"Ada\"}" } }] },
      { id: "t1", role: "tool", toolCallId: "c1", content: "remembered" },
      { id: "a2", role: "assistant", content: "Bonjour Ada." },
      { id: "d1", role: "developer", content: "Be brief." },
      { id: "u2", role: "user", content: [{ type: "text", text: "what is my name?" }] },
    ],
  });
  watch(agent);
  await agent.runAgent({ runId: "run-1", context: [{ description: "locale", value: "fr-FR" }] });
  runs.push(current);
  console.log(JSON.stringify(summary(agent, {})));
  process.exit(0);
}

const agent = new HttpAgent({ url, threadId: "thread-1" });
watch(agent);

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

console.log(JSON.stringify(summary(agent, { interrupt: interrupts[0], pending: agent.pendingInterrupts.length })));
