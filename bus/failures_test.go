package bus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// TestFailureReports: the policy's OnFailure callback publishes every
// handled failure on <prefix>.failures, redacted and decodable.
func TestFailureReports(t *testing.T) {
	b := newBus(t, bus.Config{})
	sub, err := b.SubscribeFailures()
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := b.Flush(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	p := failure.NewPolicy(failure.PolicyConfig{OnFailure: b.ReportFailure})
	p.Handle(context.Background(), &failure.Error{Kind: failure.Transient, Source: failure.SourceMCP, Name: "files",
		Err: errors.New("dial https://u:hunter2@host: reset")})
	rep, err := sub.Next(ctxT(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != failure.Transient || rep.Source != failure.SourceMCP || rep.Name != "files" || rep.Action != "report" || rep.Time.IsZero() {
		t.Fatalf("report = %+v", rep)
	}
	if strings.Contains(rep.Message, "hunter2") {
		t.Fatalf("secret in report: %q", rep.Message)
	}
}
