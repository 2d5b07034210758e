package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/switchboard-dev/switchboard/failure"
)

// Well-known agent card paths: the A2A 1.0 one and the older one tried
// when the first is absent.
const (
	cardPath       = "/.well-known/agent-card.json"
	legacyCardPath = "/.well-known/agent.json"
)

// maxCardBytes bounds an agent card read from a peer.
const maxCardBytes = 1 << 20

var cardParser = a2av0.NewAgentCardParser()

// parseCard parses an agent card in the 1.0 or the 0.3 format and checks
// what a client needs: a name, and at least one interface with an http(s)
// URL and a binding.
func parseCard(b []byte) (*a2ago.AgentCard, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("agent card is not a JSON object")
	}
	card, err := cardParser(normalizeSecurity(b))
	if err != nil {
		return nil, fmt.Errorf("agent card does not parse: %w", err)
	}
	if strings.TrimSpace(card.Name) == "" {
		return nil, errors.New("agent card has no name")
	}
	n := 0
	for _, in := range card.SupportedInterfaces {
		if in == nil {
			continue
		}
		u, err := url.Parse(in.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("agent card interface has an unusable URL %q", in.URL)
		}
		if in.ProtocolBinding == "" {
			return nil, fmt.Errorf("agent card interface %q names no protocol binding", in.URL)
		}
		n++
	}
	if n == 0 {
		return nil, errors.New("agent card declares no interface")
	}
	return card, nil
}

// normalizeSecurity rewrites security requirements written in ProtoJSON
// ({"schemes": {"bearer": {"list": []}}}, as the A2A 1.0 proto and the JS
// SDK write them) into the form a2a-go v2.4.0 decodes ({"bearer": []});
// a2a-go rejects the whole card otherwise. Other input is returned as is.
func normalizeSecurity(b []byte) []byte {
	if !bytes.Contains(b, []byte(`"list"`)) {
		return b
	}
	var card map[string]any
	if json.Unmarshal(b, &card) != nil {
		return b
	}
	fix := func(v any) {
		reqs, _ := v.([]any)
		for _, r := range reqs {
			m, _ := r.(map[string]any)
			schemes, _ := m["schemes"].(map[string]any)
			for k, sv := range schemes {
				if obj, ok := sv.(map[string]any); ok {
					if l, ok := obj["list"]; ok {
						schemes[k] = l
					} else {
						schemes[k] = []any{}
					}
				}
			}
		}
	}
	fix(card["securityRequirements"])
	if skills, ok := card["skills"].([]any); ok {
		for _, sk := range skills {
			if m, ok := sk.(map[string]any); ok {
				fix(m["securityRequirements"])
			}
		}
	}
	out, err := json.Marshal(card)
	if err != nil {
		return b
	}
	return out
}

// resolveCard fetches and parses a peer's card: the 1.0 well-known path,
// then the legacy one when the first answers 404.
func resolveCard(ctx context.Context, hc *http.Client, base, path string) (*a2ago.AgentCard, error) {
	card, _, err := resolveCardJSON(ctx, hc, base, path)
	return card, err
}

// resolveCardJSON is resolveCard that also returns the card as read (its
// signatures cover that JSON, not a2a-go's reading of it).
func resolveCardJSON(ctx context.Context, hc *http.Client, base, path string) (*a2ago.AgentCard, []byte, error) {
	paths := []string{cardPath, legacyCardPath}
	if path != "" {
		paths = []string{path}
	}
	var lastErr error
	for _, p := range paths {
		u, err := url.JoinPath(base, p)
		if err != nil {
			return nil, nil, &failure.Error{Kind: failure.Config, Source: failure.SourceA2A, Message: "the peer URL is malformed", Err: err}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, nil, &failure.Error{Kind: failure.Config, Source: failure.SourceA2A, Message: "the peer URL is malformed", Err: err}
		}
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, nil, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxCardBytes+1))
		resp.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		if resp.StatusCode == http.StatusNotFound {
			lastErr = &failure.Error{Kind: failure.Protocol, Source: failure.SourceA2A, Op: "resolve card",
				Message: fmt.Sprintf("no agent card at %s", p)}
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return nil, nil, &failure.Error{Kind: failure.KindOfStatus(resp.StatusCode), Source: failure.SourceA2A, Op: "resolve card",
				Retryable: failure.KindOfStatus(resp.StatusCode) == failure.Transient,
				Message:   fmt.Sprintf("fetching the agent card answered HTTP %d", resp.StatusCode)}
		}
		if len(body) > maxCardBytes {
			return nil, nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceA2A, Op: "resolve card", Message: "the agent card is too large"}
		}
		card, err := parseCard(body)
		if err != nil {
			return nil, nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceA2A, Op: "resolve card",
				Message: "the agent card is malformed: " + err.Error()}
		}
		return card, body, nil
	}
	return nil, nil, lastErr
}

// cardJSON encodes a card in the union of the 1.0 and 0.3 formats, so that
// 0.3 clients can read it too.
func cardJSON(ctx context.Context, card *a2ago.AgentCard) ([]byte, error) {
	p, ok := a2av0.NewStaticAgentCardProducer(card).(interface {
		CardJSON(context.Context) ([]byte, error)
	})
	if ok {
		if b, err := p.CardJSON(ctx); err == nil {
			return b, nil
		}
	}
	return json.Marshal(card)
}
