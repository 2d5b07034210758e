package bus_test

import (
	"errors"
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
