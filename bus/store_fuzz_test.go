package bus_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// FuzzDecodeAnswer: an answer from the bus is decoded or refused with a
// Protocol failure, never a panic.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"question":"q_1","agent":"payer","run":"r","answer":{"action":"accept"}}`,
		`{"v":1,"question":"q_1","agent":"payer","answer":{"action":"decline","reason":"no"}}`,
		`{"v":2,"question":"q","agent":"a","answer":{"action":"accept"}}`,
		`{"v":1,"question":"","agent":"a","answer":{"action":"accept"}}`,
		`{"v":1,"question":"q","agent":"a","answer":{"action":"maybe"}}`,
		`{"v":1,"question":"q","agent":"a","answer":{"action":"accept","content":{"x":[1,{"y":null}]}}}`,
		`[]`, `null`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := bus.DecodeAnswer(data)
		if err != nil && !errors.Is(err, failure.Protocol) {
			t.Fatalf("%q: %v is not a Protocol failure", data, err)
		}
	})
}

// FuzzStoreKeys: any id maps to one KV token and back; a stored value is
// a pointer or not, never a panic.
func FuzzStoreKeys(f *testing.F) {
	for _, s := range []string{"ses_1", "a.b", "", "=", "=zz", "ü", "a b*>", strings.Repeat("x", 300), `@{"v":1,"obj":"T/k/x","size":3}`, `@{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		k := bus.StoreKey(id)
		if k == "" || strings.ContainsAny(k, " .*>\t\r\n") {
			t.Fatalf("StoreKey(%q) = %q", id, k)
		}
		back, err := bus.IDOfKey(k)
		if err != nil || back != id {
			t.Fatalf("IDOfKey(StoreKey(%q)) = %q, %v", id, back, err)
		}
		_, _ = bus.IDOfKey(id)
		_ = bus.BlobName([]byte(id))
	})
}
