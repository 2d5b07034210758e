package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// taskState is the client's view of one remote task, folded from events.
type taskState struct {
	id         a2ago.TaskID
	contextID  string
	state      a2ago.TaskState
	statusText string
	// artifacts in first-seen order; chunks are appended when the event
	// says append.
	order     []a2ago.ArtifactID
	artifacts map[a2ago.ArtifactID]*a2ago.Artifact
	complete  map[a2ago.ArtifactID]bool
	reply     *a2ago.Message
	events    int
	dropped   bool
}

func newTaskState() *taskState {
	return &taskState{artifacts: map[a2ago.ArtifactID]*a2ago.Artifact{}, complete: map[a2ago.ArtifactID]bool{}}
}

// settled reports whether the task needs nothing more from the stream: a
// terminal or interrupted state, or a direct reply.
func (s *taskState) settled() bool {
	if s.reply != nil {
		return true
	}
	switch s.state {
	case a2ago.TaskStateInputRequired, a2ago.TaskStateAuthRequired:
		return true
	}
	return s.state.Terminal()
}

func (s *taskState) setArtifact(a *a2ago.Artifact, appendParts bool) {
	if a == nil {
		return
	}
	cur, ok := s.artifacts[a.ID]
	if !ok {
		s.order = append(s.order, a.ID)
		c := *a
		c.Parts = append(a2ago.ContentParts(nil), a.Parts...)
		s.artifacts[a.ID] = &c
		return
	}
	if appendParts {
		cur.Parts = append(cur.Parts, a.Parts...)
		return
	}
	c := *a
	c.Parts = append(a2ago.ContentParts(nil), a.Parts...)
	s.artifacts[a.ID] = &c
}

// apply folds an event in and returns the progress to report, if any.
func (s *taskState) apply(ev a2ago.Event) *agent.Progress {
	s.events++
	switch v := ev.(type) {
	case *a2ago.Message:
		s.reply = v
		if v.ContextID != "" {
			s.contextID = v.ContextID
		}
		return nil
	case *a2ago.Task:
		s.id, s.contextID = v.ID, v.ContextID
		s.state = v.Status.State
		s.statusText = messageText(v.Status.Message)
		// A task snapshot is authoritative: replace the artifacts.
		s.order, s.artifacts = nil, map[a2ago.ArtifactID]*a2ago.Artifact{}
		for _, a := range v.Artifacts {
			s.setArtifact(a, false)
		}
		return &agent.Progress{Progress: float64(s.events), Message: fmt.Sprintf("remote task %s: %s", stateWord(s.state), orNone(s.statusText))}
	case *a2ago.TaskStatusUpdateEvent:
		if s.id == "" {
			s.id, s.contextID = v.TaskID, v.ContextID
		}
		s.state = v.Status.State
		s.statusText = messageText(v.Status.Message)
		msg := "remote task " + stateWord(s.state)
		if s.statusText != "" {
			msg += ": " + s.statusText
		}
		return &agent.Progress{Progress: float64(s.events), Message: msg}
	case *a2ago.TaskArtifactUpdateEvent:
		if s.id == "" {
			s.id, s.contextID = v.TaskID, v.ContextID
		}
		s.setArtifact(v.Artifact, v.Append)
		if v.LastChunk && v.Artifact != nil {
			s.complete[v.Artifact.ID] = true
		}
		name := ""
		if v.Artifact != nil {
			name = v.Artifact.Name
			if name == "" {
				name = string(v.Artifact.ID)
			}
		}
		return &agent.Progress{Progress: float64(s.events), Message: fmt.Sprintf("artifact %s: %s", name, partsText(v.Artifact))}
	}
	return nil
}

// result renders the task's artifacts (or the direct reply) as a tool
// result, with a last line naming the task and context so that the model
// can continue the conversation.
func (s *taskState) result(peer string) *agent.Result {
	var parts []agent.Part
	if s.reply != nil {
		parts = append(parts, toAgentParts(s.reply.Parts)...)
	} else {
		for _, id := range s.order {
			parts = append(parts, toAgentParts(s.artifacts[id].Parts)...)
		}
		if len(parts) == 0 && s.statusText != "" {
			parts = append(parts, agent.Part{Type: agent.PartText, Text: s.statusText})
		}
	}
	ref := fmt.Sprintf("(A2A peer %s", peer)
	if s.id != "" {
		ref += ", task " + string(s.id)
	}
	if s.contextID != "" {
		ref += ", context_id " + s.contextID
	}
	parts = append(parts, agent.Part{Type: agent.PartText, Text: ref + ")"})
	return &agent.Result{Parts: parts}
}

// toAgentParts converts A2A parts to tool result parts.
func toAgentParts(ps []*a2ago.Part) []agent.Part {
	out := make([]agent.Part, 0, len(ps))
	for _, p := range ps {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2ago.Text:
			// Merge consecutive text chunks of an artifact into one part.
			if n := len(out); n > 0 && out[n-1].Type == agent.PartText {
				out[n-1].Text += string(c)
				continue
			}
			out = append(out, agent.Part{Type: agent.PartText, Text: string(c)})
		case a2ago.Data:
			b, err := json.Marshal(c.Value)
			if err != nil {
				continue
			}
			out = append(out, agent.Part{Type: agent.PartJSON, JSON: b})
		case a2ago.Raw:
			t := agent.PartResource
			switch {
			case strings.HasPrefix(p.MediaType, "image/"):
				t = agent.PartImage
			case strings.HasPrefix(p.MediaType, "audio/"):
				t = agent.PartAudio
			}
			out = append(out, agent.Part{Type: t, MIMEType: p.MediaType, Data: []byte(c), Name: p.Filename, URI: p.Filename})
		case a2ago.URL:
			out = append(out, agent.Part{Type: agent.PartResourceLink, URI: string(c), Name: p.Filename, MIMEType: p.MediaType})
		}
	}
	return out
}

// messageText is the text of a message's text parts.
func messageText(m *a2ago.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		if t, ok := p.Content.(a2ago.Text); ok {
			b.WriteString(string(t))
		}
	}
	return b.String()
}

func partsText(a *a2ago.Artifact) string {
	if a == nil {
		return ""
	}
	return messageText(&a2ago.Message{Parts: a.Parts})
}

// stateWord is a task state in plain words ("input required").
func stateWord(s a2ago.TaskState) string {
	w := strings.TrimPrefix(string(s), "TASK_STATE_")
	if w == "" {
		return "unknown"
	}
	return strings.ReplaceAll(strings.ToLower(w), "_", " ")
}

func orNone(s string) string {
	if s == "" {
		return "(no message)"
	}
	return s
}

// a2aErrors are the protocol's typed errors: a peer answering one is
// healthy, and retrying will not change its answer.
var a2aErrors = []error{
	a2ago.ErrTaskNotFound, a2ago.ErrTaskNotCancelable, a2ago.ErrPushNotificationNotSupported,
	a2ago.ErrUnsupportedOperation, a2ago.ErrUnsupportedContentType, a2ago.ErrInvalidParams,
	a2ago.ErrInvalidRequest, a2ago.ErrMethodNotFound, a2ago.ErrExtendedCardNotConfigured,
	a2ago.ErrExtensionSupportRequired, a2ago.ErrVersionNotSupported, a2ago.ErrUnauthenticated,
	a2ago.ErrUnauthorized, a2ago.ErrParseError, a2ago.ErrInvalidAgentResponse,
}

func isA2AError(err error) bool {
	for _, e := range a2aErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// classifyErr is classify for use inside Policy.Execute (nil stays nil).
func classifyErr(err error, peer, tool, op string) error {
	if err == nil {
		return nil
	}
	return classify(err, peer, tool, op)
}

// classify maps an a2a-go client error onto the failure taxonomy.
func classify(err error, peer, tool, op string) *failure.Error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe
	}
	mk := func(k failure.Kind, msg string) *failure.Error {
		return &failure.Error{Kind: k, Source: failure.SourceA2A, Name: peer, Tool: tool, Op: op, Message: msg, Err: err, Retryable: k.Retryable()}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return mk(failure.Timeout, "")
	case errors.Is(err, context.Canceled):
		return mk(failure.Canceled, "")
	case errors.Is(err, a2ago.ErrUnauthenticated):
		return mk(failure.PermissionDenied, "the peer refused our credentials (unauthenticated)")
	case errors.Is(err, a2ago.ErrUnauthorized):
		return mk(failure.PermissionDenied, "the peer refused the request (unauthorized)")
	case errors.Is(err, a2ago.ErrTaskNotFound):
		return mk(failure.NotFound, "the peer does not know the task")
	case errors.Is(err, a2ago.ErrTaskNotCancelable):
		return mk(failure.Rejected, "the task can no longer be cancelled")
	case errors.Is(err, a2ago.ErrUnsupportedContentType), errors.Is(err, a2ago.ErrUnsupportedOperation),
		errors.Is(err, a2ago.ErrInvalidParams), errors.Is(err, a2ago.ErrExtensionSupportRequired):
		return mk(failure.Rejected, "the peer rejected the request: "+firstLine(err.Error()))
	case errors.Is(err, a2ago.ErrParseError), errors.Is(err, a2ago.ErrInvalidRequest),
		errors.Is(err, a2ago.ErrMethodNotFound), errors.Is(err, a2ago.ErrVersionNotSupported),
		errors.Is(err, a2ago.ErrInvalidAgentResponse):
		return mk(failure.Protocol, "the peer and this client disagree on the protocol: "+firstLine(err.Error()))
	case errors.Is(err, a2ago.ErrServerError), errors.Is(err, a2ago.ErrInternalError):
		return mk(failure.Transient, "the peer reported an internal error")
	}
	if m := httpStatus.FindStringSubmatch(err.Error()); m != nil {
		code, _ := strconv.Atoi(m[1])
		switch k := failure.KindOfStatus(code); k {
		case failure.PermissionDenied:
			return mk(k, fmt.Sprintf("the peer refused our credentials (HTTP %d)", code))
		case failure.Unknown:
		default:
			return mk(k, fmt.Sprintf("the peer answered HTTP %d", code))
		}
	}
	k := failure.KindOf(err)
	if k == failure.Unknown {
		s := err.Error()
		switch {
		case strings.Contains(s, "unmarshal"), strings.Contains(s, "decode"), strings.Contains(s, "invalid character"),
			strings.Contains(s, "unexpected"), strings.Contains(s, "violates"), strings.Contains(s, "unknown event"):
			k = failure.Protocol
		default:
			k = failure.Transient
		}
	}
	return mk(k, "")
}

// httpStatus finds the status a2a-go's JSON-RPC client reports for a
// non-200 answer.
var httpStatus = regexp.MustCompile(`unexpected HTTP status: (\d{3})`)

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
