package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTwoProcesses builds the example and runs it: the agent's permission
// asks and sampling requests are answered by the responder process over
// NATS.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two processes")
	}
	bin := filepath.Join(t.TempDir(), "responders")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{
		"bus listening at nats://127.0.0.1:",
		"responders ready",
		"approving publish_post",
		"declining permission delete_posts",
		"write_poem: A haiku from the responder process",
		"publish_post: published",
		"delete_posts: Error",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(s, "(pid ") < 2 || t.Failed() {
		t.Logf("output:\n%s", s)
	}
}
