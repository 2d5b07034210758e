package bus_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestAgentPermissionAskOverBus wires a real agent to the bus: its
// permission asks go out as elicitations to a responder on another
// connection, and its events are published and replayed.
func TestAgentPermissionAskOverBus(t *testing.T) {
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0"})
	console := newBus(t, bus.Config{URLs: []string{host.ClientURL()}})
	ctx := ctxT(t, 30*time.Second)

	var asked atomic.Int64
	h := bus.NewElicitHandlers()
	h.Handle(agent.ElicitPermission, agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		asked.Add(1)
		var args struct{ Path string }
		_ = json.Unmarshal(e.Args, &args)
		if e.Tool != "delete_file" || e.Run == "" || e.Call == "" {
			t.Errorf("permission question lacks context: %+v", e)
		}
		if args.Path == "tmp/scratch.txt" {
			return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
		}
		return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "not outside tmp/"}, nil
	}))
	svc, err := console.ServeElicitation(ctx, h, bus.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()

	tests := []struct {
		name    string
		path    string
		deleted bool
		want    string
	}{
		{"approved", "tmp/scratch.txt", true, "deleted tmp/scratch.txt"},
		{"declined", "etc/passwd", false, "declined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran atomic.Bool
			del := agent.NewFuncTool(agent.ToolSpec{Name: "delete_file", Description: "Delete a file",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
				func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
					ran.Store(true)
					var a struct{ Path string }
					_ = json.Unmarshal(args, &a)
					return agent.TextResult("deleted " + a.Path), nil
				})
			model := llm.NewScripted(
				llm.Calls(llm.CallTool("c1", "delete_file", map[string]string{"path": tt.path})),
				llm.SummarizeResults("summary"),
			)
			a, err := agent.New(ctx, agent.Config{Model: model, Tools: []agent.Tool{del}, Elicitor: host.Elicitor(), Events: host})
			if err != nil {
				t.Fatal(err)
			}
			ans, err := a.Run(ctx, "delete "+tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if ran.Load() != tt.deleted {
				t.Errorf("tool ran = %v, want %v", ran.Load(), tt.deleted)
			}
			if !strings.Contains(ans.Text, tt.want) {
				t.Errorf("answer %q does not mention %q", ans.Text, tt.want)
			}
			// The run's events reached the bus; the console replays them.
			if err := host.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var types []string
			for ev, err := range console.Subscribe(ctx, ans.Run) {
				if err != nil {
					t.Fatal(err)
				}
				types = append(types, string(ev.Type))
			}
			joined := strings.Join(types, ",")
			if !strings.HasPrefix(joined, "run_started,") || !strings.HasSuffix(joined, ",final") || !strings.Contains(joined, "tool_finished") {
				t.Errorf("replayed events: %s", joined)
			}
			if tt.deleted == strings.Contains(joined, "failure") {
				t.Errorf("failure event presence wrong for %s: %s", tt.name, joined)
			}
		})
	}
	if asked.Load() != 2 {
		t.Errorf("asked %d times, want 2", asked.Load())
	}
}
