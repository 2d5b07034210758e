package worker

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// traceHeader is ctx's W3C trace context as a NATS header (nil: none).
// Every message of a job carries it: the start request, the job's output,
// its pings and cancellation.
func traceHeader(ctx context.Context) nats.Header {
	if h := telemetry.InjectHeader(ctx, nil); h != nil {
		return nats.Header(h)
	}
	return nil
}

// publish publishes data on subject with header h (nil: none).
func publish(nc *nats.Conn, subject string, data []byte, h nats.Header) error {
	if h == nil {
		return nc.Publish(subject, data)
	}
	return nc.PublishMsg(&nats.Msg{Subject: subject, Data: data, Header: h})
}

// request sends a request with header h (nil: none).
func request(ctx context.Context, nc *nats.Conn, subject string, data []byte, h nats.Header) (*nats.Msg, error) {
	if h == nil {
		return nc.RequestWithContext(ctx, subject, data)
	}
	return nc.RequestMsgWithContext(ctx, &nats.Msg{Subject: subject, Data: data, Header: h})
}

// consume opens the CONSUMER span of a start request (process {pool}), a
// child of the pool's PRODUCER span that ctx continues, with the served
// runner's telemetry configuration (else the global providers). The job's
// run is its child; it ends with the job.
func (s *Server) consume(ctx context.Context) (context.Context, *telemetry.Op) {
	src := telemetry.NewSource(nil, nil, false)
	if ht, ok := s.r.(interface{ Telemetry() agent.Telemetry }); ok {
		c := ht.Telemetry()
		src = telemetry.NewSource(c.TracerProvider, c.MeterProvider, c.RecordContent)
	}
	return src.Get().StartConsumer(ctx, telemetry.Messaging{Destination: s.cfg.Name, Group: s.cfg.Name})
}

// kindOf is the error.type of err ("" for nil).
func kindOf(err error) string {
	if err == nil {
		return ""
	}
	return failure.From(err).Kind.String()
}
