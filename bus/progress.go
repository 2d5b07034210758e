package bus

import (
	"context"
	"encoding/json"

	"github.com/switchboard-dev/switchboard/failure"
)

// publishProgress publishes a progress report on <prefix>.progress.<run>
// (tests publish progress this way; runs publish it through Emit).
func (b *Bus) publishProgress(ctx context.Context, p ProgressUpdate) error {
	return b.progressPublisher(p.Run).publish(ctx, p)
}

// progressPublisher publishes one run's progress on a pre-built subject.
type progressPublisher struct {
	b       *Bus
	run     string
	subject string
}

// progressPublisher returns a publisher of run's progress.
func (b *Bus) progressPublisher(run string) *progressPublisher {
	return &progressPublisher{b: b, run: run, subject: b.subj.Progress(run)}
}

// publish publishes p with its Run set to the publisher's run.
func (pp *progressPublisher) publish(ctx context.Context, p ProgressUpdate) error {
	p.Run = pp.run
	data, err := json.Marshal(progressWire{V: version, ProgressUpdate: p})
	if err != nil {
		return &failure.Error{Kind: failure.Internal, Source: failure.SourceBus, Op: "publish progress", Err: err,
			Message: "a progress report could not be encoded"}
	}
	if err := pp.b.publishMsg(pp.subject, data, traceHeader(ctx)); err != nil {
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
