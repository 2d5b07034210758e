package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readSSE returns the events of an SSE response, in order.
func readSSE(t *testing.T, resp *http.Response) (names []string, events []agent.Event) {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var ev agent.Event
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			names = append(names, name)
			events = append(events, ev)
		}
	}
	return names, events
}

func TestRunStreamsEvents(t *testing.T) {
	a, err := newAgent(context.Background(), scriptedClock())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(a))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/run", "text/plain", strings.NewReader("What time is it in Tokyo?"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	names, events := readSSE(t, resp)
	want := []string{"run_started", "turn_started", "model_turn", "tool_started", "tool_finished", "turn_started", "model_text"}
	for i, w := range want {
		if i >= len(names) || names[i] != w {
			t.Fatalf("events %v, want prefix %v", names, want)
		}
	}
	last := events[len(events)-1]
	if last.Type != agent.EventFinal || !strings.Contains(last.Text, "get_time:") || !strings.Contains(last.Text, "JST") {
		t.Fatalf("final event %+v", last)
	}
}

func TestBadRequests(t *testing.T) {
	a, err := newAgent(context.Background(), scriptedClock())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(a))
	defer srv.Close()
	for _, tc := range []struct {
		method, body string
		want         int
	}{{"POST", "", http.StatusBadRequest}, {"GET", "", http.StatusMethodNotAllowed}} {
		req, _ := http.NewRequest(tc.method, srv.URL+"/run", strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %q: %d, want %d", tc.method, tc.body, resp.StatusCode, tc.want)
		}
	}
}

// TestRunFailureIsAnEvent: a run that fails ends the stream with an error event.
func TestRunFailureIsAnEvent(t *testing.T) {
	a, err := newAgent(context.Background(), llm.NewScripted(llm.Say("")))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(a))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/run", "text/plain", strings.NewReader("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	names, _ := readSSE(t, resp)
	if names[len(names)-1] != "error" {
		t.Fatalf("events %v, want a final error event", names)
	}
}
