package server

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzNormaliseArgs: a client's arguments become a JSON object or a clear
// refusal, never a panic or something that is not an object.
func FuzzNormaliseArgs(f *testing.F) {
	for _, s := range []string{"", "null", "{}", `{"a":1}`, "[]", `"x"`, " {\"a\": [1, {\"b\": null}]} ", "{", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := normaliseArgs(raw)
		if err != nil {
			return
		}
		var obj map[string]any
		if json.Unmarshal(out, &obj) != nil || obj == nil {
			t.Fatalf("%q normalised to %q, not an object", raw, out)
		}
	})
}

// FuzzFastTake: the fast path reads any JSON object a client writes
// without panicking, and takes nothing before the session is initialized
// or for a call it does not hold.
func FuzzFastTake(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","_meta":{"progressToken":7}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1,"arguments":[]}}`,
		`{"method":"tools/call","params":{"requestState":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	srv, err := New(context.Background(), Config{})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	fp := newFastPath(srv)
	defer fp.stop()
	f.Fuzz(func(t *testing.T, frame []byte) {
		if !json.Valid(frame) || len(frame) == 0 || frame[0] != '{' {
			return
		}
		if fp.take(frame) {
			t.Fatalf("taken before the session was initialized: %s", frame)
		}
	})
}
