package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestExample runs the example: one login through the bus, used by both
// replicas.
func TestExample(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	runErr := run(ctx)
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if runErr != nil {
		t.Fatalf("run: %v\n%s", runErr, out)
	}
	for _, want := range []string{
		`person: Sign in to the MCP server "notes" to continue.`,
		"replica 1: latest_note: buy milk",
		"replica 2: latest_note: buy milk",
		"logins asked of the person: 1; authorization code grants: 1",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
