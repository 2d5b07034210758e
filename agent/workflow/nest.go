package workflow

import "github.com/switchboard-dev/switchboard/agent"

// nest wraps an event of a step's run for the workflow's stream: it
// returns EventNested carrying ev, or ev's own Nested event when ev is
// already a forwarded one (so nesting stays one level deep and Parent
// places the event).
func nest(ev agent.Event) agent.Event {
	if ev.Type == agent.EventNested && ev.Nested != nil {
		return agent.Event{Type: agent.EventNested, Nested: ev.Nested}
	}
	cp := ev
	return agent.Event{Type: agent.EventNested, Nested: &cp}
}
