package eval

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// Trial is what one run of a case did: the material scorers score.
type Trial struct {
	// Case is the case run.
	Case *Case
	// Calls are the tool calls the run made, in the order they started.
	Calls []Call
	// Text is the answer's text ("" when the run failed).
	Text string
	// Answer is the run's answer (nil when it failed).
	Answer *agent.Answer
	// Err is the error the run ended with, if any.
	Err error
	// Events are every event of the run, nested runs' included.
	Events []agent.Event
	// Elapsed, Usage, Cost and Turns measure the run.
	Elapsed time.Duration
	Usage   llm.Usage
	Cost    llm.Cost
	Turns   int
}

// Call is a tool call a run made.
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
	// Result is the text of the call's result.
	Result string `json:"result,omitempty"`

	id string
}

// observe adds ev to the trial.
func (t *Trial) observe(ev agent.Event) {
	t.Events = append(t.Events, ev)
	if ev.Type == agent.EventNested || ev.Parent != nil {
		return
	}
	switch ev.Type {
	case agent.EventToolStarted:
		if ev.Call != nil {
			t.Calls = append(t.Calls, Call{Tool: ev.Call.Tool, Args: compactArgs(ev.Call.Args), id: ev.Call.ID})
		}
	case agent.EventToolFinished:
		if ev.Call == nil {
			return
		}
		for i := len(t.Calls) - 1; i >= 0; i-- {
			if t.Calls[i].id == ev.Call.ID {
				t.Calls[i].Result = ev.Result.Text()
				break
			}
		}
	case agent.EventModelTurn:
		t.Turns++
		if ev.Usage != nil {
			t.Usage = t.Usage.Add(*ev.Usage)
		}
		if ev.Cost != nil {
			t.Cost = t.Cost.Add(*ev.Cost)
		}
	case agent.EventFinal:
		t.Text = ev.Text
		t.Answer = ev.Answer
	}
}

func compactArgs(b json.RawMessage) json.RawMessage {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
