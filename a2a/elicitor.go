package a2a

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
)

// clientElicitor is the elicitor a served run asks under
// ServerConfig.AskClient (through internal/elicitctx): a question becomes
// the task's input-required (or auth-required) state, and the client's next
// message on the task is the answer.
func (tr *taskRun) clientElicitor() agent.Elicitor {
	return agent.ElicitorFunc(tr.ask)
}

// ask puts a question to the client and waits for the answer.
func (tr *taskRun) ask(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	q := &question{e: e, reply: make(chan agent.ElicitationResult, 1)}
	select {
	case tr.out <- runItem{q: q}:
	case <-ctx.Done():
		return agent.ElicitationResult{}, ctx.Err()
	case <-tr.done:
		return agent.ElicitationResult{}, context.Canceled
	}
	timer := time.NewTimer(tr.s.cfg.InputTimeout)
	defer timer.Stop()
	select {
	case a := <-q.reply:
		return a, nil
	case <-timer.C:
		// Nobody pumps this run any more: stop it rather than let it run
		// unobserved; the task stays input-required.
		tr.cancel()
		return agent.ElicitationResult{Action: agent.ElicitCancel,
			Reason: fmt.Sprintf("the A2A client did not answer within %s", tr.s.cfg.InputTimeout)}, nil
	case <-ctx.Done():
		return agent.ElicitationResult{}, ctx.Err()
	}
}
