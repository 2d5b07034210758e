package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// maxRelayed bounds the relayed retries a replica serves at once.
const maxRelayed = 1000

// relayGrace is added to the server's call timeout to bound one relayed
// retry.
const relayGrace = 5 * time.Second

// relay carries multi round-trip retries (protocol revision 2026-07-28)
// between replicas over NATS request-reply, <prefix>.mcp.retry.<replica>:
// a call waits on the replica that started it, its requestStates name
// that replica (<replica>.<state>), and a replica receiving a retry for
// another sends it there and answers with the owner's reply.
type relay struct {
	srv     *server.Server
	nc      *nats.Conn
	prefix  string
	replica string
	timeout time.Duration
	log     *zerolog.Logger
	sem     chan struct{}
	sub     *nats.Subscription
	ctx     context.Context
	cancel  context.CancelFunc
	// relayed counts the retries this replica sent to others, served
	// those it answered for others (logs and tests).
	relayed, served atomic.Int64
}

// retryMsg is a retry on the wire: who retries, the state (without the
// replica's name) and the answers.
type retryMsg struct {
	Owner     string          `json:"owner"`
	State     string          `json:"state"`
	Responses json.RawMessage `json:"responses,omitempty"`
}

// startRelay subscribes to the retries relayed to replica.
func startRelay(srv *server.Server, nc *nats.Conn, prefix, replica string, log *zerolog.Logger) (*relay, error) {
	r := &relay{srv: srv, nc: nc, prefix: prefix, replica: replica, timeout: srv.Config().CallTimeout + relayGrace,
		log: log, sem: make(chan struct{}, maxRelayed)}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	sub, err := nc.Subscribe(r.subject(replica), r.onRetry)
	if err != nil {
		r.cancel()
		return nil, failure.Wrap(failure.Unavailable, failure.SourceBus, err)
	}
	r.sub = sub
	return r, nil
}

func (r *relay) subject(replica string) string { return r.prefix + ".mcp.retry." + replica }

// middleware names this replica in the requestStates the server answers
// and sends a retry naming another replica to it.
func (r *relay) middleware(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		ctr, ok := req.(*gomcp.CallToolRequest)
		if !ok {
			return next(ctx, method, req)
		}
		if rt, ok := server.RetryOf(ctr); ok {
			if owner, state, named := strings.Cut(rt.State, "."); named && validReplica(owner) {
				if owner != r.replica {
					rt.State = state
					return r.forward(ctx, owner, rt), nil
				}
				p := *ctr.Params
				p.RequestState = state
				ctr = &gomcp.CallToolRequest{Session: ctr.Session, Params: &p, Extra: ctr.Extra}
			}
		}
		res, err := next(ctx, method, ctr)
		if tr, ok := res.(*gomcp.CallToolResult); ok && tr != nil {
			r.name(tr)
		}
		return res, err
	}
}

// validReplica reports whether a requestState's first part can name a
// replica (and so a subject): not empty, no blanks or wildcards. A state
// that names none is left to the server, which does not know it.
func validReplica(s string) bool {
	return s != "" && !strings.ContainsAny(s, " *>\t\r\n")
}

// name prefixes res's requestState with this replica's name.
func (r *relay) name(res *gomcp.CallToolResult) {
	if res.RequestState != "" {
		res.RequestState = r.replica + "." + res.RequestState
	}
}

// forward sends rt to the replica holding its call and waits for the
// answer, at most the call timeout and 5 s.
func (r *relay) forward(ctx context.Context, replica string, rt server.Retry) *gomcp.CallToolResult {
	msg := retryMsg{Owner: rt.Caller, State: rt.State}
	if rt.Responses != nil {
		b, err := json.Marshal(rt.Responses)
		if err != nil {
			return errorResult("the retry's answers could not be encoded")
		}
		msg.Responses = b
	}
	data, _ := json.Marshal(msg)
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	r.relayed.Add(1)
	out := nats.NewMsg(r.subject(replica))
	out.Data = data
	if telemetry.Active(ctx) {
		out.Header = nats.Header(telemetry.InjectHeader(ctx, out.Header))
	}
	m, err := r.nc.RequestMsgWithContext(ctx, out)
	if err != nil {
		r.log.Warn().Err(err).Str("owner", replica).Msg("relaying a multi round-trip retry failed")
		return errorResult("the call this retry continues could not be reached: call the tool again without requestState")
	}
	var res gomcp.CallToolResult
	if err := json.Unmarshal(m.Data, &res); err != nil {
		return errorResult("the replica holding the call answered malformed JSON")
	}
	if res.Content == nil && !res.NeedsInput() {
		res.Content = []gomcp.Content{} // as go-sdk answers: not null
	}
	return &res
}

// onRetry answers a retry relayed to this replica, on a goroutine of its
// own (a retry waits for the call's next question or result), at most
// maxRelayed at once.
func (r *relay) onRetry(m *nats.Msg) {
	select {
	case r.sem <- struct{}{}:
	default:
		_ = m.Respond([]byte(`{"content":[{"type":"text","text":"the gateway is busy: retry later"}],"isError":true}`))
		return
	}
	go func() {
		defer func() { <-r.sem }()
		ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
		defer cancel()
		if len(m.Header) > 0 {
			ctx = telemetry.ExtractHeader(ctx, m.Header) // the retried call continues the caller's trace
		}
		out, err := r.serve(ctx, m.Data)
		if err != nil {
			r.log.Warn().Err(err).Msg("a relayed retry was malformed")
			out = []byte(`{"content":[{"type":"text","text":"malformed relayed retry"}],"isError":true}`)
		}
		_ = m.Respond(out)
	}()
}

// serve resumes the call of a relayed retry and encodes the answer.
func (r *relay) serve(ctx context.Context, data []byte) ([]byte, error) {
	var msg retryMsg
	if err := json.Unmarshal(data, &msg); err != nil {
		return nil, err
	}
	rt := server.Retry{Caller: msg.Owner, State: msg.State}
	if len(msg.Responses) > 0 {
		if err := json.Unmarshal(msg.Responses, &rt.Responses); err != nil {
			return nil, err
		}
	}
	r.served.Add(1)
	res := r.srv.Resume(ctx, rt)
	r.name(res)
	return encodeAnswer(res)
}

// encodeAnswer is res as JSON with its resultType: go-sdk writes it only
// on the results its own tools/call handler returns, and a relayed answer
// is returned by the receiving replica's middleware, beside it. The
// retry came from a client on a revision with multi round-trip requests,
// so it is always written.
func encodeAnswer(res *gomcp.CallToolResult) ([]byte, error) {
	data, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	fields["resultType"] = json.RawMessage(`"complete"`)
	if res.InputRequests != nil {
		fields["resultType"] = json.RawMessage(`"input_required"`)
	}
	return json.Marshal(fields)
}

// stop unsubscribes and waits for the relayed retries being served.
func (r *relay) stop() {
	_ = r.sub.Unsubscribe()
	r.cancel()
	for range maxRelayed { // wait for the handlers in flight
		r.sem <- struct{}{}
	}
	for range maxRelayed {
		<-r.sem
	}
}

// errorResult is an error result of one text part.
func errorResult(text string) *gomcp.CallToolResult {
	return &gomcp.CallToolResult{IsError: true, Content: []gomcp.Content{&gomcp.TextContent{Text: text}}}
}
