package a2a

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
)

// clientElicitor is the elicitor a served run asks under
// ServerConfig.AskClient (through agent.WithElicitor): a question becomes
// the task's input-required (or auth-required) state, and the client's next
// message on the task is the answer.
func (tr *taskRun) clientElicitor() agent.Elicitor {
	return agent.ElicitorFunc(tr.ask)
}

// ask puts a question to the client and waits for the answer, bounded by
// InputTimeout as a whole: handing the question over (the run's item
// channel may be full, with nobody pumping it) and the wait for the answer.
func (tr *taskRun) ask(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	q := &question{e: e, reply: make(chan agent.ElicitationResult, 1)}
	timer := time.NewTimer(tr.s.cfg.InputTimeout)
	defer timer.Stop()
	select {
	case tr.out <- runItem{q: q}:
	case <-timer.C:
		return tr.unanswered("nobody took the question"), nil
	case <-ctx.Done():
		return agent.ElicitationResult{}, ctx.Err()
	case <-tr.done:
		return agent.ElicitationResult{}, context.Canceled
	}
	select {
	case a := <-q.reply:
		return a, nil
	case <-timer.C:
		return tr.unanswered("the A2A client did not answer"), nil
	case <-ctx.Done():
		return agent.ElicitationResult{}, ctx.Err()
	}
}

// unanswered stops a run whose question went unanswered for InputTimeout:
// nobody pumps it any more, so it should not run on unobserved (a task
// that reached input-required stays so).
func (tr *taskRun) unanswered(why string) agent.ElicitationResult {
	tr.cancel()
	return agent.ElicitationResult{Action: agent.ElicitCancel,
		Reason: fmt.Sprintf("%s within %s", why, tr.s.cfg.InputTimeout)}
}
