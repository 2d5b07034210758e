package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// auditStream is the JetStream stream of the audit records.
const auditStream = "SWITCHBOARD_AUDIT"

// auditor publishes every call's record on <prefix>.audit.<tool> of a
// JetStream stream (kept 30 days or 1 GiB, whichever is first).
type auditor struct {
	b      *bus.Bus
	js     jetstream.JetStream
	prefix string
	log    *zerolog.Logger
}

func newAuditor(ctx context.Context, b *bus.Bus, log *zerolog.Logger) (*auditor, error) {
	a := &auditor{b: b, js: b.JetStream(), prefix: b.Prefix(), log: log}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := a.js.CreateOrUpdateStream(sctx, jetstream.StreamConfig{Name: auditStream,
		Subjects: []string{a.prefix + ".audit.>"}, MaxAge: 30 * 24 * time.Hour, MaxBytes: 1 << 30,
		Discard: jetstream.DiscardOld}); err != nil {
		return nil, fmt.Errorf("audit stream: %w", err)
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
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	subject := a.prefix + ".audit." + agent.ToolName(rec.Tool)
	if _, err := a.js.Publish(pctx, subject, data); err != nil {
		a.log.Warn().Err(err).Str("tool", rec.Tool).Msg("audit record not published")
	}
}

// newBus connects the gateway's bus: the NATS server of url, or an
// embedded one.
func newBus(ctx context.Context, url string, log *zerolog.Logger) (*bus.Bus, error) {
	cfg := bus.Config{Name: "switchboard-gateway", Logger: log}
	if url != "" {
		cfg.URLs = []string{url}
	}
	return bus.New(ctx, cfg)
}
