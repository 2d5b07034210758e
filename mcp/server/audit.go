package server

import (
	"context"
	"slices"
	"time"
)

// AuditRecord describes one tools/call, given to [Config].Audit and to
// the receivers added with [Server.AddAudit] after the call ended (the
// gateway publishes it on JetStream). It holds no
// arguments or results: only who called what, and how it ended.
type AuditRecord struct {
	Time time.Time `json:"time"`
	// Client is who called: the token's subject ("sub:<id>") on HTTP with
	// auth, else "session:<id>" (or "stdio" for the stdio client).
	Client string `json:"client"`
	// Session is the MCP session id ("" on stdio and stateless HTTP).
	Session string `json:"session,omitempty"`
	// Tool is the name called; Source the tool's provenance
	// (e.g. "mcp:files:read_file"), when the tool exists.
	Tool   string `json:"tool"`
	Source string `json:"source,omitempty"`
	// Outcome is one of "ok", "tool_error" (the tool answered isError),
	// "failed" (a failure: timeout, unavailable source, panic), "denied"
	// (permission policy or the person), "invalid_args", "rate_limited",
	// "unknown_tool".
	Outcome string `json:"outcome"`
	// IsError is whether the client got an error result.
	IsError  bool          `json:"is_error"`
	Duration time.Duration `json:"duration_ns"`
}

// Outcomes of AuditRecord.
const (
	outcomeOK          = "ok"
	outcomeToolError   = "tool_error"
	outcomeFailed      = "failed"
	outcomeDenied      = "denied"
	outcomeGuarded     = "guarded"
	outcomeInvalidArgs = "invalid_args"
	outcomeRateLimited = "rate_limited"
	outcomeUnknownTool = "unknown_tool"
)

// AddAudit adds f to the receivers of every tools/call's record, beside
// [Config].Audit: for what wraps a Server already built (the gateway's
// audit stream). Like Config.Audit, f runs on the call's goroutine once
// the call ended and must not block for long; calls that end while
// AddAudit runs may not reach f. It is safe for concurrent use.
func (s *Server) AddAudit(f func(ctx context.Context, rec AuditRecord)) {
	if f == nil {
		return
	}
	for {
		old := s.audits.Load()
		var next []func(context.Context, AuditRecord)
		if old != nil {
			next = slices.Clone(*old)
		}
		next = append(next, f)
		if s.audits.CompareAndSwap(old, &next) {
			return
		}
	}
}

// audit gives rec to Config.Audit and the receivers AddAudit added (New
// makes it the server's cfg.Audit, so every path that records a call
// reaches them all).
func (s *Server) audit(ctx context.Context, rec AuditRecord) {
	if s.userAudit != nil {
		s.userAudit(ctx, rec)
	}
	if fs := s.audits.Load(); fs != nil {
		for _, f := range *fs {
			f(ctx, rec)
		}
	}
}
