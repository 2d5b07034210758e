//go:build unix

package mcp

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioShutdown: closing the connection closes the server's stdin; a
// server that exits then is not signalled, and one that ignores both its
// closed input and SIGTERM is killed after two grace periods.
func TestStdioShutdown(t *testing.T) {
	const grace = 200 * time.Millisecond
	tests := []struct {
		mode   string
		signal syscall.Signal // the signal that ended it, 0 for an exit
		min    time.Duration
	}{
		{"", 0, 0},
		{"stubborn", syscall.SIGKILL, 2 * grace},
	}
	for _, tt := range tests {
		t.Run("mode="+tt.mode, func(t *testing.T) {
			cmd := exec.Command(testServerPath())
			cmd.Env = append(os.Environ(), "TESTSERVER_MODE="+tt.mode)
			tr := &stdioTransport{cmd: cmd, grace: grace, maxFrame: gomcp.DefaultMaxLineLength}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			_ = cs.Close()
			took := time.Since(t0)
			ps := cmd.ProcessState
			if ps == nil {
				t.Fatal("the server process was not reaped")
			}
			ws := ps.Sys().(syscall.WaitStatus)
			var sig syscall.Signal
			if ws.Signaled() {
				sig = ws.Signal()
			}
			if sig != tt.signal || took < tt.min || took > 10*time.Second {
				t.Fatalf("ended by signal %v after %v; want signal %v after at least %v", sig, took, tt.signal, tt.min)
			}
		})
	}
}
