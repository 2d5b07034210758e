package mcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestHostAPIErrors(t *testing.T) {
	m := newManager(t, quickConfig(testServer("s", "", nil)))
	ctx := context.Background()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	first := func(seq func(func(any, error) bool)) error {
		var out error
		seq(func(_ any, err error) bool { out = err; return false })
		return out
	}
	tests := []struct {
		name   string
		err    error
		kind   failure.Kind
		wantOp string
	}{
		{"unknown server", first(func(y func(any, error) bool) {
			for r, err := range m.Resources(ctx, "nope") {
				if !y(r, err) {
					return
				}
			}
		}), failure.InvalidArgs, ""},
		{"read without resources", func() error { _, err := m.ReadResource(ctx, "s", "file:///x"); return err }(), failure.InvalidArgs, "read resource"},
		{"prompt without prompts", func() error { _, err := m.GetPrompt(ctx, "s", "p", nil); return err }(), failure.InvalidArgs, "get prompt"},
		{"bad completion ref", func() error { _, err := m.Complete(ctx, "s", "tool:x", "a", "", nil); return err }(), failure.InvalidArgs, ""},
		{"wait for unknown", m.WaitReady(ctx, "nope"), failure.InvalidArgs, ""},
		{"call unknown server", func() error { _, err := m.CallTool(ctx, "nope", "echo", nil); return err }(), failure.InvalidArgs, ""},
		{"args not an object", func() error { _, err := m.CallTool(ctx, "s", "echo", []byte(`[1]`)); return err }(), failure.InvalidArgs, ""},
	}
	n := 0
	for _, err := range m.Resources(ctx, "s") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 0 {
		t.Errorf("%d resources from a server that has none", n)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fe *failure.Error
			if !errors.As(tt.err, &fe) || fe.Kind != tt.kind || fe.Source != failure.SourceMCP {
				t.Fatalf("err = %v, want %v from mcp", tt.err, tt.kind)
			}
			if fe.Op != tt.wantOp {
				t.Errorf("op %q, want %q", fe.Op, tt.wantOp)
			}
		})
	}
}

func TestDisabledAndClosed(t *testing.T) {
	sc := testServer("off", "", nil)
	sc.Disabled = true
	m := newManager(t, quickConfig(sc, testServer("on", "", nil)))
	if st := m.Status(); st[0].State != stateDisabled || st[1].State != stateReady {
		t.Fatalf("%+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := m.CallTool(ctx, "off", "echo", nil); !errors.Is(err, failure.Unavailable) {
		t.Fatalf("disabled: %v", err)
	}
	_ = m.Close()
	if st := m.Status(); st[1].State != stateClosed {
		t.Fatalf("after close: %+v", st[1])
	}
	if _, err := m.CallTool(ctx, "on", "echo", nil); !errors.Is(err, failure.Unavailable) {
		t.Fatalf("closed: %v", err)
	}
}

func TestSmallHelpers(t *testing.T) {
	stops := []struct{ in, want string }{
		{"end_turn", "endTurn"}, {"", "endTurn"}, {"stop", "endTurn"}, {"max_tokens", "maxTokens"},
		{"length", "maxTokens"}, {"stop_sequence", "stopSequence"}, {"tool_use", "tool_use"},
	}
	for _, s := range stops {
		if got := mcpStopReason(s.in); got != s.want {
			t.Errorf("mcpStopReason(%q) = %q, want %q", s.in, got, s.want)
		}
	}
	roots := []struct{ in, uri, name string }{
		{"/srv/data", "file:///srv/data", "data"},
		{"file:///srv/shared/", "file:///srv/shared/", "shared"},
		{"https://example.com/repo", "https://example.com/repo", "repo"},
	}
	for _, r := range roots {
		got := rootOf(r.in)
		if got.URI != r.uri || got.Name != r.name {
			t.Errorf("rootOf(%q) = %+v", r.in, got)
		}
	}
}
