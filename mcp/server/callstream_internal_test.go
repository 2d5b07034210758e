package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWithCallValues: the context a call's question is sent with has the
// call's values, the asker's deadline, and ends when either ends, with
// the cause of the one that ended.
func TestWithCallValues(t *testing.T) {
	type key struct{}
	errAsker, errCall := errors.New("asker gone"), errors.New("call ended")
	for _, tc := range []struct {
		name      string
		end       func(asker, call context.CancelCauseFunc)
		wantCause error
	}{
		{"asker ends", func(a, _ context.CancelCauseFunc) { a(errAsker) }, errAsker},
		{"call ends", func(_, c context.CancelCauseFunc) { c(errCall) }, errCall},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call, ccancel := context.WithCancelCause(context.WithValue(context.Background(), key{}, "call"))
			defer ccancel(nil)
			deadline := time.Now().Add(time.Minute)
			asker, acancel0 := context.WithDeadline(context.WithValue(context.Background(), key{}, "asker"), deadline)
			defer acancel0()
			asker, acancel := context.WithCancelCause(asker)
			defer acancel(nil)
			out, cancel := withCallValues(asker, call)
			defer cancel()
			if v := out.Value(key{}); v != "call" {
				t.Errorf("value %v, want the call's", v)
			}
			if d, ok := out.Deadline(); !ok || !d.Equal(deadline) {
				t.Errorf("deadline %v %v, want the asker's %v", d, ok, deadline)
			}
			if out.Err() != nil {
				t.Fatalf("ended before either did: %v", out.Err())
			}
			tc.end(acancel, ccancel)
			select {
			case <-out.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("not ended 5 s after one side ended")
			}
			if got := context.Cause(out); !errors.Is(got, tc.wantCause) {
				t.Errorf("cause %v, want %v", got, tc.wantCause)
			}
		})
	}
}
