package a2a

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
)

// TestAskHandOffBounded: a question whose hand-off nobody takes (the run's
// item channel is full and no Execute pumps it) ends after InputTimeout
// with a cancelled answer and the run stopped, instead of blocking the
// run until its context ends; an answered question still gets its answer.
func TestAskHandOffBounded(t *testing.T) {
	const timeout = 50 * time.Millisecond
	tests := []struct {
		name    string
		pumped  bool // an Execute takes the question and the client answers
		wantAct agent.ElicitAction
		wantWhy string
		stopped bool
	}{
		{"nobody takes the question", false, agent.ElicitCancel, "nobody took the question within", true},
		{"answered", true, agent.ElicitAccept, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: ServerConfig{InputTimeout: timeout}}
			rctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tr := &taskRun{ctx: rctx, cancel: cancel, out: make(chan runItem, 1), done: make(chan struct{}), s: s}
			tr.out <- runItem{} // full: the hand-off blocks until someone reads
			if tc.pumped {
				go func() {
					<-tr.out // what the run said before
					it := <-tr.out
					it.q.reply <- agent.ElicitationResult{Action: agent.ElicitAccept}
				}()
			}
			type answer struct {
				r   agent.ElicitationResult
				err error
			}
			got := make(chan answer, 1)
			go func() {
				r, err := tr.ask(context.Background(), agent.Elicitation{Message: "which?"})
				got <- answer{r, err}
			}()
			var a answer
			select {
			case a = <-got:
			case <-time.After(20 * timeout):
				cancel() // let the hand-off go (tr.ctx is not the ask's context)
				close(tr.done)
				t.Fatal("ask blocked on the hand-off past InputTimeout")
			}
			if a.err != nil || a.r.Action != tc.wantAct || !strings.Contains(a.r.Reason, tc.wantWhy) {
				t.Fatalf("ask = %+v, %v; want %s %q", a.r, a.err, tc.wantAct, tc.wantWhy)
			}
			if stopped := rctx.Err() != nil; stopped != tc.stopped {
				t.Fatalf("run stopped = %v, want %v", stopped, tc.stopped)
			}
		})
	}
}
