package bus

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// FailureReport is a handled failure on <prefix>.failures: what happened,
// where, and what the policy decided. Its text is redacted.
type FailureReport struct {
	Time time.Time `json:"time"`
	agent.FailureInfo
}

type failureWire struct {
	V int `json:"v"`
	FailureReport
}

// ReportFailure publishes a handled failure on <prefix>.failures (core
// NATS: monitoring consoles subscribe there). Its signature fits
// failure.PolicyConfig.OnFailure, so that every failure the policy handles,
// from every component and outside any run, is also an event on the bus:
//
//	var b atomic.Pointer[bus.Bus]
//	policy := failure.NewPolicy(failure.PolicyConfig{OnFailure: func(ctx context.Context, o failure.Outcome) {
//		if b := b.Load(); b != nil { b.ReportFailure(ctx, o) }
//	}})
//
// It never blocks and never reports its own failures to the policy (that
// would loop); they are logged.
func (b *Bus) ReportFailure(ctx context.Context, o failure.Outcome) {
	if o.Err == nil {
		return
	}
	data, err := json.Marshal(failureWire{V: version, FailureReport: FailureReport{Time: time.Now(), FailureInfo: *agent.NewFailureInfo(o)}})
	if err == nil {
		err = b.publishMsg(b.subj.Failures(), data, traceHeader(ctx))
	}
	if err != nil {
		b.log.Warn().Err(err).Str("kind", o.Err.Kind.String()).Msg("a failure report could not be published")
	}
}

// SubscribeFailures follows <prefix>.failures live. Close the subscription
// when done.
func (b *Bus) SubscribeFailures() (*Subscription[FailureReport], error) {
	return liveSubscription(b, b.subj.Failures(), "subscribe failures", decodeFailure)
}

// decodeFailure decodes a failure report payload.
func decodeFailure(data []byte) (FailureReport, error) {
	var w failureWire
	if err := json.Unmarshal(data, &w); err != nil {
		return FailureReport{}, protocolError("decode failure", err)
	}
	if err := checkVersion("decode failure", w.V); err != nil {
		return FailureReport{}, err
	}
	return w.FailureReport, nil
}
