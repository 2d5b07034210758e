package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/lineconn"
)

// TestStdoutWriteBounded: the gateway's stdout (openFile) keeps the
// file's deadlines, so a write to a client that stopped reading ends at
// its context's deadline instead of blocking for good.
func TestStdoutWriteBounded(t *testing.T) {
	r, w, err := os.Pipe() // in the netpoller, as stdio makes stdout
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	_, out := keepOpen(strings.NewReader(""), w)
	c := lineconn.New(strings.NewReader(""), out, lineconn.Options{Stall: time.Minute})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.WriteLine(ctx, []byte(`"`+strings.Repeat("x", 4<<20)+`"`)) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a 4 MiB write to a pipe nobody reads succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write ignored its deadline")
	}
}
