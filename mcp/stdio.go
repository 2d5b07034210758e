package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
)

// stdioTransport starts a server's process and speaks newline-delimited
// JSON-RPC over its stdin and stdout (mcp/internal/lineconn). It replaces go-sdk's
// CommandTransport, whose connection decodes each message with go-sdk's
// allocation-heavy decoder; the shutdown is the same: close stdin, wait,
// SIGTERM, wait, SIGKILL.
type stdioTransport struct {
	cmd      *exec.Cmd
	grace    time.Duration // each wait of the shutdown
	maxFrame int           // the bound on one message's size
	// notes, if set, handles the server's log and progress notifications
	// (see noteQueue); log gets the queue's drop reports.
	notes    func(method string, params json.RawMessage)
	log      zerolog.Logger
	coalesce *coalescer // see clientHooks
	// onConn, if set, is given the connection Connect made and its queue
	// of notifications (nil without notes).
	onConn func(*lineconn.Conn, *noteQueue)
}

// Connect starts the process.
func (t *stdioTransport) Connect(context.Context) (gomcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	grace := t.grace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	// Wait also waits for stderr to be copied to the log; a grandchild
	// that keeps stderr open must not hold it past the grace.
	t.cmd.WaitDelay = grace
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() error {
		// MCP's stdio shutdown: close the server's input, wait for it to
		// exit, then SIGTERM, then SIGKILL.
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- t.cmd.Wait() }()
		wait := func() (error, bool) {
			timer := time.NewTimer(grace)
			defer timer.Stop()
			select {
			case err := <-done:
				return exitErr(err), true
			case <-timer.C:
				return nil, false
			}
		}
		if err, ok := wait(); ok {
			return err
		}
		if t.cmd.Process.Signal(syscall.SIGTERM) == nil {
			if err, ok := wait(); ok {
				return err
			}
		}
		if err := t.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		if err, ok := wait(); ok {
			return err
		}
		return fmt.Errorf("the server process %d did not exit after SIGKILL", t.cmd.Process.Pid)
	}
	kill := func() {
		// A server that stopped reading, or whose input holds half a
		// message: kill it (and its group) at once; Close reaps it.
		_ = t.cmd.Process.Kill()
		killProcessGroup(t.cmd)
	}
	h := clientHooks{nudge: newNudger(nudgeFirst, nudgeMax), coalesce: t.coalesce}
	if t.notes != nil {
		h.notes = newNoteQueue(t.log, t.notes)
	}
	c := newClientConn(stdout, stdin, lineconn.Options{Close: stop, Kill: kill, MaxFrame: t.maxFrame}, h)
	if t.onConn != nil {
		t.onConn(c, h.notes)
	}
	return c, nil
}

// exitErr keeps a server's exit status out of Close's result: a server
// that exits non-zero when its input closes has still shut down.
func exitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil
	}
	return err
}
