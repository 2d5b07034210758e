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

// FuzzFindAndCallArgs: find_tools' and call_tool's arguments are read or
// refused with an error, never a panic, and what is read is in bounds.
func FuzzFindAndCallArgs(f *testing.F) {
	for _, s := range []string{"", "null", "{}", `{"query":"x"}`, `{"queries":["a"," ",""],"limit":3}`, `{"limit":-1,"query":"x"}`,
		`{"name":"t","arguments":{"a":1}}`, `{"name":"t","arguments":null}`, `{"name":""}`, "[]", "{", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if queries, limit, err := parseFindArgs(raw); err == nil {
			if len(queries) == 0 || len(queries) > findMaxQueries || limit < 1 || limit > findMaxLimit {
				t.Fatalf("%q read as %d queries, limit %d", raw, len(queries), limit)
			}
		}
		if name, args, err := parseCallArgs(raw); err == nil && (name == "" || string(args) == "null") {
			t.Fatalf("%q read as name %q, arguments %q", raw, name, args)
		}
	})
}
