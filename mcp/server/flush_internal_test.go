package server

import (
	"encoding/json"
	"testing"
)

// FuzzKindOf: kindOf never panics, and tells a response from a request
// or notification whatever the id (a string or number from the client,
// as go-sdk encodes it).
func FuzzKindOf(f *testing.F) {
	f.Add("x", int64(7), []byte("event: message\nid: a_1\ndata: {}\n\n"))
	f.Add(`"\\",`, int64(-1), []byte("event: prime\nid: a_0\ndata: \n\n"))
	f.Add(`,"result":`, int64(0), []byte(`event: message\ndata: {"jsonrpc":"2.0","id":"`))
	f.Fuzz(func(t *testing.T, sid string, nid int64, raw []byte) {
		_ = kindOf(raw)
		for _, id := range []any{sid, nid} {
			b, err := json.Marshal(id)
			if err != nil {
				t.Skip()
			}
			event := func(rest string) []byte {
				return []byte("event: message\nid: s_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + string(b) + rest + "\n\n")
			}
			if k := kindOf(event(`,"result":{}}`)); k != eventResponse {
				t.Errorf("a response with id %s: kind %d", b, k)
			}
			if k := kindOf(event(`,"error":{"code":1,"message":"m"}}`)); k != eventResponse {
				t.Errorf("an error response with id %s: kind %d", b, k)
			}
			if k := kindOf(event(`,"method":"sampling/createMessage","params":{}}`)); k != eventOther {
				t.Errorf("a request with id %s: kind %d", b, k)
			}
		}
	})
}
