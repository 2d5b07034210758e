package main

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// maxRelayed bounds the relayed retries being served at once.
const maxRelayed = 1000

// relay carries multi round-trip retries between gateway replicas over
// NATS request-reply: <prefix>.mcp.retry.<replica>.
type relay struct {
	b       *bus.Bus
	timeout time.Duration
	log     *zerolog.Logger
	sem     chan struct{}
}

func newRelay(b *bus.Bus, callTimeout time.Duration, log *zerolog.Logger) *relay {
	return &relay{b: b, timeout: callTimeout + 5*time.Second, log: log, sem: make(chan struct{}, maxRelayed)}
}

func (r *relay) subject(replica string) string {
	return r.b.Prefix() + ".mcp.retry." + replica
}

// forward sends a retry to the replica holding its call and waits for the
// answer, at most the call timeout and 5 s.
func (r *relay) forward(ctx context.Context, replica string, retry []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	m, err := r.b.Conn().RequestWithContext(ctx, r.subject(replica), retry)
	if err != nil {
		return nil, r.b.Classify(err, "relay retry")
	}
	return m.Data, nil
}

// serve answers the retries relayed to srv's replica, each on a goroutine
// of its own (a retry waits for the call's next question or result),
// at most maxRelayed at once. stop unsubscribes and waits for them.
func (r *relay) serve(srv *server.Server) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	sub, err := r.b.Conn().Subscribe(r.subject(srv.Replica()), func(m *nats.Msg) {
		select {
		case r.sem <- struct{}{}:
		default:
			_ = m.Respond([]byte(`{"content":[{"type":"text","text":"the gateway is busy: retry later"}],"isError":true}`))
			return
		}
		go func() {
			defer func() { <-r.sem }()
			cctx, ccancel := context.WithTimeout(ctx, r.timeout)
			defer ccancel()
			out, err := srv.ServeRetry(cctx, m.Data)
			if err != nil {
				r.log.Warn().Err(err).Msg("a relayed retry was malformed")
				out = []byte(`{"content":[{"type":"text","text":"malformed relayed retry"}],"isError":true}`)
			}
			_ = m.Respond(out)
		}()
	})
	if err != nil {
		cancel()
		return nil, err
	}
	return func() {
		_ = sub.Unsubscribe()
		cancel()
		for range maxRelayed { // wait for the handlers in flight
			r.sem <- struct{}{}
		}
		for range maxRelayed {
			<-r.sem
		}
	}, nil
}
