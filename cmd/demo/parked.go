package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// The environment of the demo started again as the answering process.
const (
	envAnswerURL   = "SWITCHBOARD_DEMO_ANSWER_URL"
	envAnswerToken = "SWITCHBOARD_DEMO_ANSWER_TOKEN"
)

// answerMain is the demo started again by parkedStep: a process that
// reads the inbox from the store on the bus and answers the question. It
// reports whether this process is that one (main then returns).
func answerMain() bool {
	url := os.Getenv(envAnswerURL)
	if url == "" {
		return false
	}
	if err := answerInbox(url, os.Getenv(envAnswerToken)); err != nil {
		fmt.Fprintln(os.Stderr, "demo answerer:", err)
		os.Exit(1)
	}
	return true
}

func answerInbox(url, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.New(ctx, bus.Config{URLs: []string{url}, Token: token, Name: "demo-answerer"})
	if err != nil {
		return err
	}
	defer b.Close()
	st, err := store.OpenAgent(ctx, b, store.AgentConfig{})
	if err != nil {
		return err
	}
	pending, err := st.PendingQuestions(ctx)
	if err != nil {
		return err
	}
	for i := range pending {
		q := &pending[i]
		fmt.Printf("  [process %d] inbox: %q; answering: accept\n", os.Getpid(), q.Elicitation.Message)
		if err := b.Answer(ctx, q, agent.ElicitationResult{Action: agent.ElicitAccept}); err != nil {
			return err
		}
	}
	return nil
}

// parkedStep shows a human wait that costs nothing: a run asks whether it
// may publish, parks (its question is stored, its goroutine ends), another
// process answers from the inbox on the bus, and the answer resumes the
// run here.
func (w *world) parkedStep(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "switchboard-demo-park-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	token := rand.Text()
	b, err := bus.New(ctx, bus.Config{Listen: "127.0.0.1:0", Token: token, StoreDir: dir, Logger: &w.log})
	if err != nil {
		return err
	}
	defer b.Close()
	st, err := store.OpenAgent(ctx, b, store.AgentConfig{})
	if err != nil {
		return err
	}
	publish := agent.NewFuncTool(agent.ToolSpec{Name: "publish_report", Description: "Publishes the report."},
		func(context.Context, json.RawMessage) (*agent.Result, error) {
			return agent.TextResult("published"), nil
		})
	model := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if req.Messages[len(req.Messages)-1].Role == llm.RoleTool { // the tool answered
			return llm.Say("The report is published.")
		}
		return llm.Calls(llm.CallTool("pub", "publish_report", map[string]any{"file": "report.md"}))
	}))
	a, err := agent.New(ctx, agent.Config{Name: "publisher", Model: model, Tools: []agent.Tool{publish}, Logger: &w.log,
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "publish_report", Permission: agent.Ask}}},
		Durable:     agent.Durable(st, -1)})
	if err != nil {
		return err
	}
	w.tr.say("")
	w.tr.step("durable: a run asks whether it may publish, and parks")
	ans, err := a.Run(ctx, "Publish the report.")
	if !errors.Is(err, failure.Parked) {
		return fmt.Errorf("the run did not park: %v", err)
	}
	w.tr.say("  run %s parked on question %s: stored in JetStream, no goroutine waits", ans.Run, ans.Question)

	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), envAnswerURL+"="+b.ClientURL(), envAnswerToken+"="+token)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("the answering process: %w", err)
	}
	w.tr.say("%s", trimNL(string(out)))

	srv, err := b.ServeAnswers(ctx, a, st)
	if err != nil {
		return err
	}
	defer srv.Close()
	for {
		cp, err := st.LoadCheckpoint(ctx, ans.Run)
		if err == nil && cp.State == agent.RunDone && cp.Answer != nil {
			w.tr.say("  the answer arrived on the bus and resumed the run here: %s", cp.Answer.Text)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the parked run did not resume: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}
