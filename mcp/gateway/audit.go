package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// AuditStream is the JetStream stream of the audit records (with
// [Config].Audit): subjects <Prefix>.audit.<tool>, each record a
// [server.AuditRecord] as JSON, kept 30 days or 1 GiB, the oldest dropped
// first.
const AuditStream = "SWITCHBOARD_AUDIT"

// auditPublishTimeout bounds the wait for JetStream's ack of one record.
const auditPublishTimeout = 2 * time.Second

// auditor publishes every call's record on <prefix>.audit.<tool> of the
// audit stream.
type auditor struct {
	js     jetstream.JetStream
	prefix string
	log    *zerolog.Logger
}

// newAuditor creates or updates the audit stream.
func newAuditor(ctx context.Context, js jetstream.JetStream, prefix string, log *zerolog.Logger) (*auditor, error) {
	a := &auditor{js: js, prefix: prefix, log: log}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := js.CreateOrUpdateStream(sctx, jetstream.StreamConfig{Name: AuditStream,
		Subjects: []string{prefix + ".audit.>"}, MaxAge: 30 * 24 * time.Hour, MaxBytes: 1 << 30,
		Discard: jetstream.DiscardOld}); err != nil {
		return nil, failure.Wrap(failure.Unavailable, failure.SourceBus, fmt.Errorf("gateway: audit stream: %w", err))
	}
	return a, nil
}

// record publishes rec, waiting at most 2 s for JetStream's ack; a failed
// publish is logged (the call has already been answered).
func (a *auditor) record(ctx context.Context, rec server.AuditRecord) {
	data, err := json.Marshal(rec)
	if err != nil {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, auditPublishTimeout)
	defer cancel()
	tok := agent.ToolName(rec.Tool)
	if tok == "" {
		tok = "_"
	}
	if _, err := a.js.Publish(pctx, a.prefix+".audit."+tok, data); err != nil {
		a.log.Warn().Err(err).Str("tool", rec.Tool).Msg("audit record not published")
	}
}
