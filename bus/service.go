package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// defaultQueueGroup is the queue group responders join unless told
// otherwise: each request goes to one member of the group.
const defaultQueueGroup = wire.QueueGroup

// ServeOptions configures a responder. The zero value means defaults.
type ServeOptions struct {
	// QueueGroup the responder joins (default "switchboard"). Responders
	// in the same group share the requests; each group gets every request.
	QueueGroup string
	// MaxConcurrent bounds the requests handled at once (default 32); more
	// wait in the subscription's buffer, and other members of the queue
	// group take the load. 1 handles requests one at a time on the
	// subscription's goroutine, without a hand-off (the lowest latency, for
	// fast handlers).
	MaxConcurrent int
	// Run, for ServeElicitation, limits the responder to one run's
	// questions (default: every run).
	Run string
	// Name of the micro service (default "switchboard-sampling" or
	// "switchboard-elicit"), shown by `nats micro ls`.
	Name string
	// Version of the micro service (default "1.0.0").
	Version string
}

// stopGrace is how long Stop waits for handlers that were cancelled.
const stopGrace = 5 * time.Second

// busService is a running responder: a nats.go micro service (discoverable
// with `nats micro ls`, with request and error stats) whose endpoint
// handles each request in its own goroutine, bounded by MaxConcurrent.
// Stop it, or Close the Bus.
type busService struct {
	b      *Bus
	svc    micro.Service
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}

	mu       sync.Mutex
	stopping bool
	inflight int
	idle     chan struct{} // closed when stopping and inflight reaches 0
	once     sync.Once
	stopErr  error
}

// Info describes the service (name, id, endpoints).
func (s *busService) Info() micro.Info { return s.svc.Info() }

// Stats returns the service's request and error counts. Handlers run
// asynchronously, so processing time counts the hand-off only.
func (s *busService) Stats() micro.Stats { return s.svc.Stats() }

// Close stops taking requests, lets in-flight ones finish for up to 5s,
// then cancels them and waits for them to return (at most 5s more: a
// handler that ignores cancellation is abandoned, and reported). Closing
// the Bus closes its services.
func (s *busService) Close() error {
	s.b.unregister(s)
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	return s.stop(ctx)
}

func (s *busService) stop(ctx context.Context) error {
	s.once.Do(func() {
		s.mu.Lock()
		s.stopping = true
		if s.inflight == 0 {
			close(s.idle)
		}
		s.mu.Unlock()
		if err := s.svc.Stop(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			s.stopErr = err
		}
		select {
		case <-s.idle:
		case <-ctx.Done():
			s.cancel()
			select {
			case <-s.idle:
			case <-time.After(stopGrace):
				s.stopErr = s.b.fail(failure.Timeout, "stop responder", nil,
					fmt.Sprintf("a handler ignored cancellation for %s; it was abandoned", stopGrace))
				s.b.pol().Handle(context.WithoutCancel(ctx), s.stopErr)
			}
		}
		s.cancel()
	})
	return s.stopErr
}

func (s *busService) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.inflight++
	return true
}

func (s *busService) end() {
	s.mu.Lock()
	s.inflight--
	if s.stopping && s.inflight == 0 {
		close(s.idle)
	}
	s.mu.Unlock()
}

// respond sends a reply; a failed send is handled by the policy (the
// requester will time out).
func (s *busService) respond(req micro.Request, reply string, data []byte, fe *wireError) {
	if reply == "" {
		return
	}
	var err error
	switch {
	case req != nil && fe == nil:
		// On the subscription's goroutine: through micro, which counts it.
		err = req.Respond(data)
	case req != nil:
		err = req.Error(fe.Kind.String(), fe.Message, data)
	case fe == nil:
		err = s.b.nc.Publish(reply, data)
	default:
		m := &nats.Msg{Subject: reply, Data: data, Header: nats.Header{}}
		m.Header.Set(headerError, fe.Message)
		m.Header.Set(headerErrorCode, fe.Kind.String())
		err = s.b.nc.PublishMsg(m)
	}
	if err != nil {
		s.b.pol().Handle(s.ctx, &failure.Error{Kind: failure.KindOf(classify(err, "reply")), Source: failure.SourceBus,
			Op: "reply", Err: err, Message: "a reply could not be sent"})
	}
}

// serve starts a micro service with one endpoint on subject.
func serve[Req, Res any](ctx context.Context, b *Bus, opts ServeOptions, name, endpoint, subject, op string,
	def time.Duration, decode func([]byte) (Req, time.Time, error), h func(context.Context, Req) (Res, error)) (*busService, error) {
	if b.isClosed.Load() {
		return nil, b.fail(failure.Unavailable, op, nil, "the bus is closed")
	}
	if opts.QueueGroup == "" {
		opts.QueueGroup = defaultQueueGroup
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 32
	}
	if opts.Name == "" {
		opts.Name = name
	}
	if opts.Version == "" {
		opts.Version = "1.0.0"
	}
	serial := opts.MaxConcurrent == 1
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &busService{b: b, ctx: sctx, cancel: cancel, sem: make(chan struct{}, opts.MaxConcurrent), idle: make(chan struct{})}

	// handle answers one request; req is set when it runs on the
	// subscription's goroutine (serial), where micro's request may be used.
	handle := func(data []byte, reply string, hdr nats.Header, req micro.Request) {
		defer s.end()
		defer func() { <-s.sem }()
		var out []byte
		var wireErr *wireError
		func() {
			defer func() {
				if v := recover(); v != nil {
					err := &failure.Error{Kind: failure.Panic, Source: failure.SourceBus, Op: op,
						Err: &failure.PanicError{Value: v}, Message: "the responder crashed"}
					b.pol().Handle(sctx, err)
					wireErr = toWire(err)
				}
			}()
			req, deadline, err := decode(data)
			if err != nil {
				b.pol().Handle(sctx, err)
				wireErr = toWire(err)
				return
			}
			if deadline.IsZero() {
				deadline = time.Now().Add(def)
			}
			rctx, rcancel := context.WithDeadline(continueTrace(sctx, hdr), deadline)
			defer rcancel()
			res, err := h(rctx, req)
			if err != nil {
				b.log.Debug().Err(err).Str("op", op).Msg("responder returned a failure")
				wireErr = toWire(err)
				return
			}
			out, err = json.Marshal(replyWire[Res]{V: version, Result: &res})
			if err != nil {
				wireErr = toWire(&failure.Error{Kind: failure.Internal, Source: failure.SourceBus, Op: op, Err: err,
					Message: "the responder's answer could not be encoded"})
			}
		}()
		if wireErr != nil {
			out, _ = json.Marshal(replyWire[Res]{V: version, Error: wireErr})
		}
		s.respond(req, reply, out, wireErr)
	}

	svc, err := micro.AddService(b.nc, micro.Config{
		Name:        opts.Name,
		Version:     opts.Version,
		Description: fmt.Sprintf("Switchboard %s responder on %s", endpoint, subject),
		QueueGroup:  opts.QueueGroup,
		Endpoint: &micro.EndpointConfig{
			Subject: subject,
			Handler: micro.HandlerFunc(func(r micro.Request) {
				data, reply, hdr := r.Data(), r.Reply(), nats.Header(r.Headers())
				stopping := func() {
					fe := toWire(b.fail(failure.Unavailable, op, nil, "the responder is stopping"))
					out, _ := json.Marshal(replyWire[Res]{V: version, Error: fe})
					s.respond(nil, reply, out, fe)
				}
				if !s.begin() {
					stopping()
					return
				}
				select {
				case s.sem <- struct{}{}:
				case <-sctx.Done():
					s.end()
					stopping()
					return
				}
				if serial {
					// One at a time anyway: no hand-off to another goroutine.
					handle(data, reply, hdr, r)
					return
				}
				go handle(data, reply, hdr, nil)
			}),
		},
	})
	if err != nil {
		cancel()
		return nil, b.wrap(classify(err, op), op, "the responder could not be started")
	}
	s.svc = svc
	b.register(s)
	// Return once the server knows the subscription, so that a request sent
	// next (from any connection) finds this responder.
	fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
	defer fcancel()
	if err := b.nc.FlushWithContext(fctx); err != nil {
		b.log.Debug().Err(err).Msg("flush after serving")
	}
	return s, nil
}

// ServeSampling answers sampling requests on <prefix>.sampling with
// sampler (for example NewModelSampler's), in a queue group, until the
// returned closer's Close (or the Bus's). ctx's values are kept; its
// cancellation does not stop the service.
func (b *Bus) ServeSampling(ctx context.Context, sampler agent.Sampler, opts ServeOptions) (io.Closer, error) {
	if sampler == nil {
		return nil, b.fail(failure.Config, "serve sampling", nil, "a sampler is required")
	}
	return closer(serve(ctx, b, opts, "switchboard-sampling", "sampling", b.subj.sampling, "serve sampling",
		b.cfg.SamplingTimeout, decodeSamplingRequest, sampler.Sample))
}

// ServeElicitation answers questions on <prefix>.elicit.* (or one run's,
// with opts.Run) with elicitor (for example an ElicitHandlers), in a queue
// group, until the returned closer's Close (or the Bus's).
func (b *Bus) ServeElicitation(ctx context.Context, elicitor agent.Elicitor, opts ServeOptions) (io.Closer, error) {
	if elicitor == nil {
		return nil, b.fail(failure.Config, "serve elicitation", nil, "an elicitor is required")
	}
	subject := b.subj.elicit + "*"
	if opts.Run != "" {
		subject = b.subj.Elicit(opts.Run)
	}
	return closer(serve(ctx, b, opts, "switchboard-elicit", "elicitation", subject, "serve elicitation",
		b.cfg.ElicitTimeout, decodeElicitation, elicitor.Elicit))
}

// closer returns s as an io.Closer, and a nil interface (not a nil
// *busService) when serving failed.
func closer(s *busService, err error) (io.Closer, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}
