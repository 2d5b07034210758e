package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzForwarderTake: the forwarder's take reads any JSON object a server
// writes without panicking, takes only the answer (or progress) of a call
// in flight, and hands that call its result or error.
func FuzzForwarderTake(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":"sbf-1","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":"sbf-1","error":{"code":-32602,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":"sbf-1"}`,
		`{"jsonrpc":"2.0","id":"sbf-2","result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"sbf-1","progress":1}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"text":"sbf-1"}}`,
		`{"jsonrpc":"2.0","id":"sbf-1","method":"ping"}`,
		`{"id":{"sbf-1":1},"result":"sbf-1"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		if !json.Valid(frame) || len(frame) == 0 || frame[0] != '{' {
			return // the connection offers only frames that are one JSON object
		}
		var fw forwarder
		progressed := 0
		c := &fwdCall{done: make(chan rawReply, 1), progress: func(json.RawMessage) { progressed++ }}
		fw.add("sbf-1", c)
		id, taken := fw.take(frame)
		select {
		case r := <-c.done:
			if !taken || id.Raw() != "sbf-1" {
				t.Fatalf("the call was answered by a frame not taken as its answer: %s", frame)
			}
			if len(r.result) == 0 && len(r.err) == 0 {
				t.Fatalf("an answer with neither result nor error: %s", frame)
			}
			if fw.lookup("sbf-1") != nil {
				t.Fatal("an answered call is still in flight")
			}
		default:
			if taken && progressed == 0 {
				t.Fatalf("a frame was taken that neither answered nor progressed the call: %s", frame)
			}
		}
	})
}
