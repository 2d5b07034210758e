// Package examples_test runs every example as a new user would first run
// it: built, started in an empty folder with an empty environment (no model
// key, no .mcp.json, no NATS server). An example either does its offline
// work or exits non-zero with one clear line on stderr; none panics.
package examples_test

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExamplesWithoutPrerequisites (issue 35): examples/embedding, the
// README's snippet, panicked with a nil pointer dereference when run
// without a model key.
func TestExamplesWithoutPrerequisites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every example")
	}
	dirs, err := filepath.Glob("*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./...")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/...: %v\n%s", err, out)
	}
	// httpservice's prerequisite is a free port: give it one that is taken.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() }) // the subtests run after this function returns
	args := map[string][]string{"httpservice": {"-addr", taken.Addr().String()}}
	// failing is the examples that need something the empty environment
	// lacks; the others run offline and succeed.
	failing := map[string]bool{"embedding": true, "httpservice": true, "mcpconfig": true}
	if len(dirs) < len(failing) {
		t.Fatalf("found %d examples", len(dirs))
	}
	for _, d := range dirs {
		name := filepath.Dir(d)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			home := t.TempDir()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args[name]...)
			cmd.Dir = home
			cmd.Env = []string{"HOME=" + home, "TMPDIR=" + home}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("still running after a minute; stderr:\n%s", stderr.String())
			}
			msg := strings.TrimRight(stderr.String(), "\n")
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine ") {
				t.Fatalf("panicked:\n%s", msg)
			}
			switch {
			case failing[name] && err == nil:
				t.Fatalf("succeeded without its prerequisites; stdout:\n%s", stdout.String())
			case !failing[name] && err != nil:
				t.Fatalf("failed offline (%v):\n%s", err, msg)
			case err != nil && (msg == "" || strings.Contains(msg, "\n")):
				t.Fatalf("exited with %v and stderr of %d lines, want one clear line:\n%s", err, strings.Count(msg, "\n")+1, msg)
			case err != nil:
				t.Logf("exit %v: %s", err, msg)
			}
		})
	}
}
