package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/llm"
)

// TokenEnv carries the bus token to worker processes (not on the command
// line, where other users could read it).
const TokenEnv = "SWITCHBOARD_TOKEN"

// Options configures the pipeline.
type Options struct {
	// Worker returns the command of the worker process, given the bus URL
	// (nil: this executable with -worker). Its environment gets TokenEnv.
	Worker func(url string) *exec.Cmd
	// Logger receives logs (nil: none).
	Logger *zerolog.Logger
	// Reviewer is the reviewer's model (nil: the scripted reviewerModel).
	Reviewer llm.Model
}

// Pipeline is the review pipeline and what it runs on: an embedded bus
// that listens on loopback, and the worker process serving the
// performance specialist.
type Pipeline struct {
	Bus *bus.Bus
	// Runner is the whole pipeline: planner → [security | performance] →
	// reviewer.
	Runner agent.Runner
	// Performance is the pool of workers serving the performance
	// specialist.
	Performance *worker.Pool
	// WorkerPID is the worker process's id.
	WorkerPID int

	cmd    *exec.Cmd
	waited chan error
}

// Start starts the bus and the worker process, and builds the pipeline.
func Start(ctx context.Context, opts Options) (p *Pipeline, err error) {
	p = &Pipeline{}
	defer func() {
		if err != nil {
			_ = p.Close()
		}
	}()
	token := rand.Text()
	if p.Bus, err = bus.New(ctx, bus.Config{Listen: "127.0.0.1:0", Token: token, Logger: opts.Logger}); err != nil {
		return nil, err
	}
	if err = p.startWorker(ctx, opts, token); err != nil {
		return nil, err
	}
	if p.Performance, err = worker.NewPool(p.Bus, "performance", worker.PoolConfig{
		Description: "Reviews a change for performance (served by worker processes).", Logger: opts.Logger}); err != nil {
		return nil, err
	}
	mk := func(name, desc string, model llm.Model, tools ...agent.Tool) (*agent.Agent, error) {
		return agent.New(ctx, agent.Config{Name: name, Description: desc, Model: model, Tools: tools,
			Permissions: agent.AllowAll(), Events: p.Bus, Logger: opts.Logger})
	}
	planner, err := mk("planner", "Turns a review request into a brief for the specialists.", plannerModel())
	if err != nil {
		return nil, err
	}
	security, err := mk("security", "Reviews a change for security.", specialistModel("Security", "scan_diff"), scanTool())
	if err != nil {
		return nil, err
	}
	reviewerM := opts.Reviewer
	if reviewerM == nil {
		reviewerM = reviewerModel()
	}
	reviewer, err := mk("reviewer", "Merges the specialists' findings into a verdict.", reviewerM)
	if err != nil {
		return nil, err
	}
	common := func(name string) workflow.Common {
		return workflow.Common{Name: name, Events: p.Bus, Logger: opts.Logger}
	}
	specialists, err := workflow.NewParallel(workflow.ParallelConfig{Common: common("specialists"),
		Branches:   []workflow.Step{{Runner: security}, {Runner: p.Performance}},
		Merge:      &workflow.Step{Runner: reviewer},
		DropFailed: true})
	if err != nil {
		return nil, err
	}
	p.Runner, err = workflow.NewSequential(workflow.SequentialConfig{Common: common("review"),
		Steps: []workflow.Step{{Runner: planner}, {Runner: specialists}}})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// startWorker starts the worker process and waits until it serves.
func (p *Pipeline) startWorker(ctx context.Context, opts Options, token string) error {
	mkCmd := opts.Worker
	if mkCmd == nil {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		mkCmd = func(url string) *exec.Cmd { return exec.Command(self, "-worker", url) }
	}
	p.cmd = mkCmd(p.Bus.ClientURL())
	if p.cmd.Env == nil {
		p.cmd.Env = os.Environ()
	}
	p.cmd.Env = append(p.cmd.Env, TokenEnv+"="+token)
	p.cmd.Stderr = os.Stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("starting the worker process: %w", err)
	}
	p.WorkerPID = p.cmd.Process.Pid
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), readyLine) {
				ready <- nil
				_, _ = io.Copy(io.Discard, out)
				return
			}
		}
		ready <- errors.New("the worker process exited before it served")
	}()
	p.waited = make(chan error, 1)
	select {
	case err = <-ready:
	case <-time.After(30 * time.Second):
		err = errors.New("the worker process did not start serving within 30s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	// Wait reads nothing more from the pipe once the reader is done.
	go func() { p.waited <- p.cmd.Wait() }()
	return err
}

// Close stops the worker process (it drains: running work goes back to the
// pool) and the bus.
func (p *Pipeline) Close() error {
	var err error
	if p.cmd != nil && p.cmd.Process != nil && p.waited != nil {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.waited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.waited
		}
		p.cmd = nil
	}
	if p.Bus != nil {
		err = p.Bus.Close()
		p.Bus = nil
	}
	return err
}
