package a2a

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestRefreshCard: a peer's new card (a new skill) rebuilds its tools (a
// skill's name is its tool's Title) and signals Changed; an unchanged card
// does not.
func TestRefreshCard(t *testing.T) {
	srv, worker := newWorker(t, ServerConfig{})
	resp, err := http.Get(worker.URL + cardPath)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var card map[string]any
	_ = json.Unmarshal(orig, &card)
	card["skills"] = append(card["skills"].([]any), map[string]any{"id": "summarise", "name": "Summarise a text", "description": "Summarises.", "tags": []string{}})
	grown, _ := json.Marshal(card)

	var mu sync.Mutex
	served := orig
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == cardPath {
			mu.Lock()
			b := served
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL, PerSkill: true}}, RefreshInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tools, _ := ts.Tools(ctx)
	if len(tools) != 4 || tools[0].Spec().Name != "a2a__w__research" || tools[0].Spec().Source.Tool != "research" {
		t.Fatalf("tools = %d %v", len(tools), tools[0].Spec())
	}
	if err := ts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ts.Changed():
		t.Fatal("changed signalled for an unchanged card")
	default:
	}
	mu.Lock()
	served = grown
	mu.Unlock()
	if err := ts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ts.Changed():
	default:
		t.Fatal("changed not signalled")
	}
	tools, _ = ts.Tools(ctx)
	if len(tools) != 5 || tools[4].Spec().Name != "a2a__w__summarise" {
		t.Fatalf("tools after refresh = %d", len(tools))
	}
	if got := tools[4].Spec().Title; got != "Summarise a text" { // the skill's name
		t.Errorf("the new skill's tool has Title %q", got)
	}
	res, err := tools[0].Call(ctx, json.RawMessage(`{"message":"research refresh"}`))
	if err != nil || res.IsError {
		t.Fatalf("%v %v", res, err)
	}
}
