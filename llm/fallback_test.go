package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// described is a scripted model that tells its capabilities.
type described struct {
	*llm.Scripted
	name string
	caps llm.Capabilities
}

func (d described) Name() string                   { return d.name }
func (d described) Capabilities() llm.Capabilities { return d.caps }

func failing(name string, kind failure.Kind) described {
	return described{Scripted: llm.NewScripted(llm.Step{Err: &failure.Error{Kind: kind, Source: failure.SourceModel, Name: name, Message: name + " failed"}}), name: name}
}

func answering(name, text string) described {
	return described{Scripted: llm.NewScripted(llm.Say(text)), name: name}
}

func TestFallback(t *testing.T) {
	once := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1})
	tests := []struct {
		name     string
		models   []llm.Model
		on       []failure.Kind
		wantText string
		wantFrom string
		wantKind failure.Kind
	}{
		{"first answers", []llm.Model{answering("a", "from a"), answering("b", "from b")}, nil, "from a", "a", 0},
		{"transient moves on", []llm.Model{failing("a", failure.Transient), answering("b", "from b")}, nil, "from b", "b", 0},
		{"timeout moves on", []llm.Model{failing("a", failure.Timeout), answering("b", "from b")}, nil, "from b", "b", 0},
		{"unavailable moves on", []llm.Model{failing("a", failure.Unavailable), failing("b", failure.Transient), answering("c", "from c")}, nil, "from c", "c", 0},
		{"a refused request ends the turn", []llm.Model{failing("a", failure.Model), answering("b", "from b")}, nil, "", "", failure.Model},
		{"a bad key ends the turn by default", []llm.Model{failing("a", failure.PermissionDenied), answering("b", "from b")}, nil, "", "", failure.PermissionDenied},
		{"On widens the kinds", []llm.Model{failing("a", failure.PermissionDenied), answering("b", "from b")},
			[]failure.Kind{failure.PermissionDenied}, "from b", "b", 0},
		{"all fail: the last failure", []llm.Model{failing("a", failure.Transient), failing("b", failure.Timeout)}, nil, "", "", failure.Timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := llm.NewFallback(llm.FallbackConfig{Models: tt.models, On: tt.on, Policy: once})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := f.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
			if tt.wantKind != 0 {
				if !errors.Is(err, tt.wantKind) {
					t.Fatalf("err = %v, want kind %v", err, tt.wantKind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != tt.wantText || resp.Model != tt.wantFrom {
				t.Errorf("answer %q from %q, want %q from %q", resp.Message.Text, resp.Model, tt.wantText, tt.wantFrom)
			}
		})
	}
}

// TestFallbackAllFailJoins: the error of a chain where every model failed
// is the last one's kind, and still shows the earlier failures.
func TestFallbackAllFailJoins(t *testing.T) {
	f, _ := llm.NewFallback(llm.FallbackConfig{Models: []llm.Model{failing("a", failure.Transient), failing("b", failure.Unavailable)}})
	_, err := f.Generate(t.Context(), &llm.Request{})
	if !errors.Is(err, failure.Unavailable) || !strings.Contains(err.Error(), "a failed") || !strings.Contains(err.Error(), "b failed") {
		t.Fatalf("err = %v, want Unavailable showing both failures", err)
	}
}

// streamsThenFails streams a word, then fails transiently.
type streamsThenFails struct{}

func (streamsThenFails) Name() string { return "streamer" }
func (streamsThenFails) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	if req.OnText != nil {
		req.OnText("half ")
	}
	return nil, &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Name: "streamer"}
}

// TestFallbackAfterStreamedText: a model that already streamed text is not
// left for the next (its text cannot be taken back).
func TestFallbackAfterStreamedText(t *testing.T) {
	next := answering("b", "whole")
	f, _ := llm.NewFallback(llm.FallbackConfig{Models: []llm.Model{streamsThenFails{}, next}})
	var got strings.Builder
	_, err := f.Generate(t.Context(), &llm.Request{OnText: func(d string) { got.WriteString(d) }})
	if !errors.Is(err, failure.Transient) || got.String() != "half " || next.Requests() != 0 {
		t.Fatalf("err %v, streamed %q, next asked %d times; want the streamer's failure and no fallback", err, got.String(), next.Requests())
	}
	// Without streaming, the same failure moves on.
	resp, err := f.Generate(t.Context(), &llm.Request{})
	if err != nil || resp.Message.Text != "whole" {
		t.Fatalf("unstreamed: %v, %+v", err, resp)
	}
}

// TestFallbackSkipsOpenCircuit: a model whose circuit the policy holds open
// is not called.
func TestFallbackSkipsOpenCircuit(t *testing.T) {
	pol := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1, BreakerFailures: 1})
	first := failing("a", failure.Transient)
	_ = pol.Execute(t.Context(), failure.Key{Source: failure.SourceModel, Name: "a"}, func(context.Context) error {
		return &failure.Error{Kind: failure.Transient}
	})
	if pol.Available(failure.Key{Source: failure.SourceModel, Name: "a"}) {
		t.Fatal("the circuit did not open")
	}
	f, _ := llm.NewFallback(llm.FallbackConfig{Models: []llm.Model{first, answering("b", "from b")}, Policy: pol})
	resp, err := f.Generate(t.Context(), &llm.Request{})
	if err != nil || resp.Model != "b" || first.Requests() != 0 {
		t.Fatalf("resp %+v, err %v, first asked %d times", resp, err, first.Requests())
	}
}

func TestFallbackCapabilities(t *testing.T) {
	a := described{name: "a", caps: llm.Capabilities{ContextWindow: 200_000, Accepts: []llm.PartKind{llm.PartImage, llm.PartDocument},
		MaxPartBytes: 5 << 20, StructuredOutput: true, Reasoning: true, ToolSearch: true}}
	b := described{name: "b", caps: llm.Capabilities{ContextWindow: 128_000, Accepts: []llm.PartKind{llm.PartImage, llm.PartAudio},
		StructuredOutput: true, PromptCache: true}}
	f, _ := llm.NewFallback(llm.FallbackConfig{Models: []llm.Model{a, b}})
	c := f.Capabilities()
	if c.ContextWindow != 128_000 || c.MaxPartBytes != 5<<20 || !c.Accept(llm.PartImage) || c.Accept(llm.PartDocument) || c.Accept(llm.PartAudio) ||
		!c.StructuredOutput || c.Reasoning || c.ToolSearch || !c.PromptCache {
		t.Errorf("capabilities = %+v", c)
	}
	if f.Name() != "fallback(a, b)" {
		t.Errorf("name = %q", f.Name())
	}
}

func TestNewFallbackRejects(t *testing.T) {
	for _, cfg := range []llm.FallbackConfig{{}, {Models: []llm.Model{nil}}} {
		if _, err := llm.NewFallback(cfg); !errors.Is(err, failure.Config) {
			t.Errorf("NewFallback(%+v) = %v, want a Config failure", cfg, err)
		}
	}
}
