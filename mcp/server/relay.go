package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// retryMsg is a multi round-trip retry relayed to the replica holding its
// call: who retries, the state, and the answers.
type retryMsg struct {
	Owner     string          `json:"owner"`
	State     string          `json:"state"`
	Responses json.RawMessage `json:"responses,omitempty"`
}

// stateReplica is the replica a requestState belongs to ("" if none).
func stateReplica(state string) string {
	r, _, ok := strings.Cut(state, ".")
	if !ok {
		return ""
	}
	return r
}

// relayRetry forwards a retry whose call lives on another replica through
// Config.Relay and returns that replica's answer; ok is false when the
// state names no other replica or no relay is configured.
func (s *Server) relayRetry(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, bool) {
	replica := stateReplica(req.Params.RequestState)
	if s.cfg.Relay == nil || replica == "" || replica == s.replica {
		return nil, false
	}
	msg := retryMsg{Owner: callOwner(req), State: req.Params.RequestState}
	if req.Params.InputResponses != nil {
		b, err := json.Marshal(req.Params.InputResponses)
		if err != nil {
			return errorResult("the retry's answers could not be encoded"), true
		}
		msg.Responses = b
	}
	data, _ := json.Marshal(msg)
	out, err := s.cfg.Relay(ctx, replica, data)
	if err != nil {
		s.log.Warn().Err(err).Str("replica", replica).Msg("relaying a multi round-trip retry failed")
		return errorResult("the call this retry continues could not be reached: call the tool again without requestState"), true
	}
	var res gomcp.CallToolResult
	if err := json.Unmarshal(out, &res); err != nil {
		return errorResult("the replica holding the call answered malformed JSON"), true
	}
	return &res, true
}

// ServeRetry answers a multi round-trip retry relayed from another replica
// (the data Config.Relay was given) with the JSON of the call's result or
// next question: wire it to the receiving end of the relay, on the
// subject or address of Replica().
func (s *Server) ServeRetry(ctx context.Context, data []byte) ([]byte, error) {
	var msg retryMsg
	if err := json.Unmarshal(data, &msg); err != nil {
		return nil, fmt.Errorf("relayed retry: %w", err)
	}
	var responses gomcp.InputResponseMap
	if len(msg.Responses) > 0 {
		if err := json.Unmarshal(msg.Responses, &responses); err != nil {
			return nil, fmt.Errorf("relayed retry's answers: %w", err)
		}
	}
	res := s.resumePending(ctx, msg.State, msg.Owner, responses)
	return json.Marshal(res)
}

// Replica is this server's replica name (Config.Replica, or a random one):
// the prefix of its requestStates, by which other replicas relay retries.
func (s *Server) Replica() string { return s.replica }
