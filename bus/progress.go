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
	data, err := json.Marshal(progressWire{V: Version, ProgressUpdate: p})
	if err != nil {
		return &failure.Error{Kind: failure.Internal, Source: failure.SourceBus, Op: "publish progress", Err: err,
			Message: "a progress report could not be encoded"}
	}
	if err := b.nc.Publish(b.subj.Progress(p.Run), data); err != nil {
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
		return replaySubscription(ctx, b, subject, "subscribe progress", DecodeProgress)
	}
	return liveSubscription(b, subject, "subscribe progress", DecodeProgress)
}
