package bus

import (
	"context"
	"encoding/json"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

// PublishProgress publishes a progress report on <prefix>.progress.<run>.
// It is synchronous but does not wait for the server (NATS buffers the
// write); the stream keeps the report for late subscribers.
func (b *Bus) PublishProgress(ctx context.Context, p ProgressUpdate) error {
	pp := ProgressPublisher{b: b, run: p.Run, subject: b.subj.Progress(p.Run)}
	return pp.Publish(ctx, p)
}

// ProgressPublisher publishes one run's progress on a pre-built subject
// (the lean path for frequent reports).
type ProgressPublisher struct {
	b       *Bus
	run     string
	subject string
}

// ProgressPublisher returns a publisher of run's progress.
func (b *Bus) ProgressPublisher(run string) *ProgressPublisher {
	return &ProgressPublisher{b: b, run: run, subject: b.subj.Progress(run)}
}

// Publish publishes p (its Run is set to the publisher's run) as
// PublishProgress does.
func (pp *ProgressPublisher) Publish(ctx context.Context, p ProgressUpdate) error {
	p.Run = pp.run
	data, err := json.Marshal(progressWire{V: version, ProgressUpdate: p})
	if err != nil {
		return &failure.Error{Kind: failure.Internal, Source: failure.SourceBus, Op: "publish progress", Err: err,
			Message: "a progress report could not be encoded"}
	}
	if err := pp.b.nc.Publish(pp.subject, data); err != nil {
		return classify(err, "publish progress")
	}
	return nil
}

// ProgressOptions configures SubscribeProgress.
type ProgressOptions struct {
	// Replay delivers the run's stored reports first (from JetStream), then
	// follows. Without it the subscription is live only (core NATS, the
	// lowest latency).
	Replay bool
}

// SubscribeProgress subscribes to a run's progress reports; run "" means
// every run. The subscription is established when it returns.
func (b *Bus) SubscribeProgress(ctx context.Context, run string, opts ProgressOptions) (*Subscription[ProgressUpdate], error) {
	subject := b.subj.progress + "*"
	if run != "" {
		subject = b.subj.Progress(run)
	}
	if opts.Replay {
		return replaySubscription(ctx, b, subject, "subscribe progress", decodeProgress)
	}
	return liveSubscription(b, subject, "subscribe progress", decodeProgress)
}
