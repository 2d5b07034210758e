package server

import (
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
