package server_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// The environment of the client process of TestTaskSurvivesKill (the test
// binary re-executed).
const (
	envTaskChild = "SWITCHBOARD_TASK_CHILD"
	envTaskNATS  = "SWITCHBOARD_TASK_NATS"
	envTaskToken = "SWITCHBOARD_TASK_TOKEN"
	envTaskMCP   = "SWITCHBOARD_TASK_MCP"
)

// bossCall is the call the client's durable run makes: the served agent
// "slow" through the Manager's server "tasks".
var bossCall = llm.ToolCall{ID: "c1", Name: "mcp__tasks__slow", Args: json.RawMessage(`{"input":"go"}`)}

// boss is the client's durable agent on st, calling through m.
func boss(ctx context.Context, m *mcp.Manager, st agent.Store, model llm.Model) (*agent.Agent, error) {
	return agent.New(ctx, agent.Config{Name: "boss", Model: model, Toolsets: []agent.Toolset{m.Toolset()},
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "mcp__tasks__*", Permission: agent.Allow}}},
		Durable:     agent.Durable(st, 0)})
}

// runTaskChild is the client process: its durable run (in the JetStream
// store of the parent's bus) calls the served agent over Streamable HTTP
// and polls its task until the process is killed.
func runTaskChild() int {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{URLs: []string{os.Getenv(envTaskNATS)}, Token: os.Getenv(envTaskToken)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: bus:", err)
		return 1
	}
	st, err := store.OpenAgent(ctx, b, store.AgentConfig{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: store:", err)
		return 1
	}
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "tasks", Type: "http", URL: os.Getenv(envTaskMCP)}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: manager:", err)
		return 1
	}
	a, err := boss(ctx, m, st, llm.NewScripted(llm.Calls(bossCall), llm.Say("unreachable")))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: agent:", err)
		return 1
	}
	_, err = a.Run(ctx, "delegate")
	fmt.Fprintln(os.Stderr, "child: the run ended before the kill:", err)
	return 1
}

// TestTaskSurvivesKill: a client process whose durable run (JetStream
// store, file storage) polls an MCP task over Streamable HTTP is
// SIGKILLed; the run resumed in this process (a new agent and Manager on
// the same store) polls the same task, recorded with the call's intent,
// to its result: the served agent (whose tasks are in the same JetStream
// store) ran once, and no tasks/cancel was sent.
func TestTaskSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a process")
	}
	ctx := testkit.Ctx(t, 90*time.Second)
	token := rand.Text()
	host := testkit.NewBus(t, bus.Config{Listen: "127.0.0.1:0", Token: token, StoreDir: t.TempDir()})
	st, err := store.OpenAgent(ctx, host, store.AgentConfig{})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var served atomic.Int32
	worker := slowWorker(t, release, &served)
	srv := newServer(t, server.Config{Runners: []agent.Runner{worker}, Tasks: st})
	var count methodCounter
	srv.MCP().AddReceivingMiddleware(count.middleware)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)

	log, err := os.Create(t.TempDir() + "/child.log")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envTaskChild+"=1", envTaskNATS+"="+host.ClientURL(), envTaskToken+"="+token, envTaskMCP+"="+hs.URL)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := false
	t.Cleanup(func() {
		if !reaped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if out, _ := os.ReadFile(log.Name()); t.Failed() && len(out) > 0 {
			t.Logf("child output:\n%s", out)
		}
	})

	// The child polls once its call's record has the task's handle.
	var run string
	testkit.WaitFor(t, 60*time.Second, "the child's call recorded with its task", func() bool {
		runs, err := st.ListRuns(ctx)
		if err != nil {
			return false
		}
		for _, r := range runs {
			calls, err := st.LoadCalls(ctx, r)
			if err == nil && len(calls) == 1 && strings.Contains(string(calls[0].Handle), `"server":"tasks"`) {
				run = r
				return count.get("tasks/get") > 0
			}
		}
		return false
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	reaped = true

	m := taskManagerOver(t, srv, nil, "http")
	second, err := boss(ctx, m, st, llm.NewScripted(llm.Say("the worker finished")))
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	ans, err := second.Resume(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != "the worker finished" {
		t.Errorf("answer %q", ans.Text)
	}
	calls, _ := st.LoadCalls(ctx, run)
	if len(calls) != 1 || calls[0].Result == nil || !strings.Contains(calls[0].Result.Content, "finished") {
		t.Errorf("the call's record after the resume: %+v", calls)
	}
	if served.Load() != 1 || count.get("tools/call") != 1 || count.get("tasks/cancel") != 0 {
		t.Errorf("served %d runs, %d tools/call, %d tasks/cancel; want 1, 1, 0", served.Load(), count.get("tools/call"), count.get("tasks/cancel"))
	}
}
