package bus

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/redact"
)

// Request headers and error headers (the error headers are the nats.go
// micro ones, so generic tools show service errors).
const (
	headerError     = "Nats-Service-Error"
	headerErrorCode = "Nats-Service-Error-Code"
)

// request sends a request envelope to subject and decodes the reply. The
// call is bounded by ctx's deadline or by def. A retryable failure is
// retried through the failure policy under key.
func request[Req, Res any](ctx context.Context, b *Bus, key failure.Key, subject, op string, def time.Duration,
	payload Req, decode func([]byte, string) (Res, error)) (Res, error) {
	var res Res
	var err error
	defer func(start time.Time) { observeRequest(ctx, op, start, err) }(time.Now())
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, def)
		defer cancel()
	}
	dl, _ := ctx.Deadline()
	data, err := json.Marshal(requestWire[Req]{V: version, DeadlineMS: dl.UnixMilli(), Request: payload})
	if err != nil {
		return res, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: op, Err: err,
			Message: "the request could not be encoded"}
	}
	attempt := func(ctx context.Context) error {
		msg, err := b.requestMsg(ctx, subject, data)
		if err != nil {
			fe := b.classifyConn(err, op).(*failure.Error)
			fe.Name = subject
			return fe
		}
		r, err := decode(msg.Data, op)
		if err != nil {
			code := msg.Header.Get(headerErrorCode)
			if code == "" || failure.KindOf(err) != failure.Protocol {
				return err
			}
			// A micro error reply without our body (another implementation).
			fe := &failure.Error{Kind: failure.Internal, Source: failure.SourceBus, Op: op, Name: subject,
				Message: redact.Redact(msg.Header.Get(headerError))}
			var k failure.Kind
			if k.UnmarshalText([]byte(code)) == nil && k != failure.Unknown {
				fe.Kind = k
			}
			return fe
		}
		res = r
		return nil
	}
	// The first attempt goes straight out (the hot path stays lean); a
	// retryable failure (a reconnecting connection, a responder's transient
	// failure) is retried through the failure policy, with backoff and the
	// circuit breaker of key.
	err = attempt(ctx)
	if err != nil && failure.From(err).Retryable && ctx.Err() == nil {
		err = b.pol().Execute(ctx, key, attempt)
	}
	return res, err
}

func decodeSamplingReplyOp(data []byte, op string) (agent.SamplingResult, error) {
	return wire.DecodeReply[agent.SamplingResult](data, op)
}

func decodeElicitReplyOp(data []byte, _ string) (agent.ElicitationResult, error) {
	return decodeElicitationReply(data)
}

// Sampler returns an agent.Sampler that sends sampling requests to
// <prefix>.sampling, answered by whichever responder of the queue group
// gets them. No responder is Unavailable, no answer by the deadline (ctx's,
// else Config.SamplingTimeout) is Timeout, a malformed reply is Protocol,
// and a failure the responder sends back keeps its kind.
func (b *Bus) Sampler() agent.Sampler { return busSampler{b} }

type busSampler struct{ b *Bus }

// Sample sends req to the sampling responders.
func (s busSampler) Sample(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
	b := s.b
	return request(ctx, b, failure.Key{Source: failure.SourceBus, Name: "sampling"}, b.subj.sampling, "sample",
		b.cfg.SamplingTimeout, req, decodeSamplingReplyOp)
}

// Elicitor returns an agent.Elicitor that sends questions to
// <prefix>.elicit.<run>, answered by whichever responder of the queue group
// gets them. Use it as agent.Config.Elicitor for permission asks. Failures
// are typed as for Sampler; a person's refusal is a result, not an error.
func (b *Bus) Elicitor() agent.Elicitor { return busElicitor{b} }

type busElicitor struct{ b *Bus }

// Elicit sends el to the elicitation responders of its run.
func (e busElicitor) Elicit(ctx context.Context, el agent.Elicitation) (agent.ElicitationResult, error) {
	b := e.b
	return request(ctx, b, failure.Key{Source: failure.SourceBus, Name: "elicit"}, b.subj.Elicit(el.Run), "elicit",
		b.cfg.ElicitTimeout, el, decodeElicitReplyOp)
}

var (
	_ agent.Sampler  = busSampler{}
	_ agent.Elicitor = busElicitor{}
)
