package bus

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// traceHeader is the W3C trace context of ctx as a NATS header (nil when
// ctx carries none): every request and publish of the bus sends it.
func traceHeader(ctx context.Context) nats.Header {
	if h := telemetry.InjectHeader(ctx, nil); h != nil {
		return nats.Header(h)
	}
	return nil
}

// publishMsg publishes data on subject with header h (nil: none).
func (b *Bus) publishMsg(subject string, data []byte, h nats.Header) error {
	if h == nil {
		return b.nc.Publish(subject, data)
	}
	return b.nc.PublishMsg(&nats.Msg{Subject: subject, Data: data, Header: h})
}

// requestMsg sends a request carrying ctx's trace context.
func (b *Bus) requestMsg(ctx context.Context, subject string, data []byte) (*nats.Msg, error) {
	if h := traceHeader(ctx); h != nil {
		return b.nc.RequestMsgWithContext(ctx, &nats.Msg{Subject: subject, Data: data, Header: h})
	}
	return b.nc.RequestWithContext(ctx, subject, data)
}

// observeRequest records a request's latency in the bus request metric.
func observeRequest(ctx context.Context, op string, start time.Time, err error) {
	t := telemetry.From(ctx)
	if t == nil {
		return
	}
	kind := ""
	if err != nil {
		kind = failure.From(err).Kind.String()
	}
	t.BusRequest(ctx, op, start, kind)
}

// continueTrace is a responder's context continuing the requester's trace.
func continueTrace(ctx context.Context, h nats.Header) context.Context {
	return telemetry.ExtractHeader(ctx, h)
}
