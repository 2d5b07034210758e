package mcp

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func note(method, params string) *jsonrpc.Request {
	return &jsonrpc.Request{Method: method, Params: []byte(params)}
}

// TestCoalescer: a change notification like one still pending is
// dropped, one that was handled lets the next through, distinct keys are
// bounded, and a reset forgets what an ended session left pending.
func TestCoalescer(t *testing.T) {
	var k coalescer
	upd := func(uri string) *jsonrpc.Request {
		return note("notifications/resources/updated", `{"uri":"`+uri+`"}`)
	}
	steps := []struct {
		do   func() bool
		drop bool
	}{
		{func() bool { return k.drop(note("notifications/tools/list_changed", "")) }, false},
		{func() bool { return k.drop(note("notifications/tools/list_changed", "")) }, true},
		{func() bool { return k.drop(note("notifications/prompts/list_changed", "")) }, false},
		{func() bool { k.handled("notifications/tools/list_changed", ""); return false }, false},
		{func() bool { return k.drop(note("notifications/tools/list_changed", "")) }, false},
		{func() bool { return k.drop(upd("a")) }, false},
		{func() bool { return k.drop(upd("b")) }, false},
		{func() bool { return k.drop(upd("a")) }, true},
		{func() bool { k.handled("notifications/resources/updated", "a"); return k.drop(upd("a")) }, false},
		{func() bool { return k.drop(note("notifications/message", "{}")) }, false},
		{func() bool { return k.drop(&jsonrpc.Request{ID: intID(1), Method: "notifications/tools/list_changed"}) }, false},
		{func() bool { k.reset(); return k.drop(note("notifications/tools/list_changed", "")) }, false},
	}
	for i, s := range steps {
		if got := s.do(); got != s.drop {
			t.Fatalf("step %d: drop = %v, want %v", i, got, s.drop)
		}
	}
	k.reset()
	for i := range maxPendingKeys {
		if k.drop(upd(fmt.Sprint(i))) {
			t.Fatalf("update %d dropped under the bound", i)
		}
	}
	if !k.drop(upd("one too many")) {
		t.Fatal("an update beyond the bound was passed on")
	}
}
