package bus

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// seeds adds every testdata payload and a few broken ones to f.
func seeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "payloads", "*.json"))
	if len(files) == 0 {
		f.Fatal("no seed payloads in testdata/payloads")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{``, `null`, `{}`, `{"v":2}`, `{"v":1}`, `{"v":"1"}`, `[1,2]`, `{"v":1,"result":null,"error":null}`,
		`{"v":1,"event":{"type":""}}`, `{"v":1,"task":"t","kind":"weird"}`, `{"v":1,"result":{"action":"maybe"}}`} {
		f.Add([]byte(s))
	}
}

// checkErr requires a decode error to be a typed bus failure: Protocol for
// bad payloads, or the kind a well-formed error reply carries.
func checkErr(t *testing.T, err error, replies bool) {
	t.Helper()
	if err == nil {
		return
	}
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if !replies && fe.Kind != failure.Protocol {
		t.Fatalf("kind %s, want protocol: %v", fe.Kind, err)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := decodeEvent(data)
		checkErr(t, err, false)
		if err == nil {
			// What decodes re-encodes and decodes to the same type.
			again, err := json.Marshal(map[string]any{"v": 1, "event": ev})
			if err != nil {
				t.Fatal(err)
			}
			ev2, err := decodeEvent(again)
			if err != nil || ev2.Type != ev.Type || ev2.Seq != ev.Seq {
				t.Fatalf("round trip: %+v vs %+v (%v)", ev, ev2, err)
			}
		}
	})
}

func FuzzDecodeProgress(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := decodeProgress(data)
		checkErr(t, err, false)
	})
}

func FuzzDecodeFailure(f *testing.F) {
	seeds(f)
	f.Add([]byte(`{"v":1,"time":"2026-11-29T17:00:00Z","kind":"transient","source":"mcp","name":"files","action":"report","message":"reset"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := decodeFailure(data)
		checkErr(t, err, false)
	})
}

func FuzzDecodeTaskUpdate(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := decodeTaskUpdate(data)
		checkErr(t, err, false)
		if err == nil && (u.Task == "" || (u.Kind != "status" && u.Kind != "artifact")) {
			t.Fatalf("accepted an invalid update: %+v", u)
		}
	})
}

func FuzzDecodeRequests(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, err := decodeSamplingRequest(data)
		checkErr(t, err, false)
		_, _, err = decodeElicitation(data)
		checkErr(t, err, false)
	})
}

func FuzzDecodeReplies(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := decodeSamplingReply(data)
		checkErr(t, err, true)
		r, err := decodeElicitationReply(data)
		checkErr(t, err, true)
		if err == nil && r.Action != "accept" && r.Action != "decline" && r.Action != "cancel" {
			t.Fatalf("accepted action %q", r.Action)
		}
	})
}

// TestDecodeSeeds pins what each seed payload decodes to, so that the
// documented examples (docs/bus.md) stay valid.
func TestDecodeSeeds(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", "payloads", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	ev, err := decodeEvent(read("event.json"))
	if err != nil || ev.Type != "tool_finished" || ev.Call.Tool != "search" || ev.Result.Text() != "found" {
		t.Errorf("event: %+v, %v", ev, err)
	}
	p, err := decodeProgress(read("progress.json"))
	if err != nil || p.Token != "tok-1" || p.Total != 10 {
		t.Errorf("progress: %+v, %v", p, err)
	}
	sr, dl, err := decodeSamplingRequest(read("sampling_request.json"))
	if err != nil || sr.MaxTokens != 200 || sr.Preferences.Hints[0] != "claude-3-sonnet" || dl.IsZero() || *sr.Temperature != 0.2 {
		t.Errorf("sampling request: %+v, %v", sr, err)
	}
	res, err := decodeSamplingReply(read("sampling_reply.json"))
	if err != nil || res.Usage.OutputTokens != 4 {
		t.Errorf("sampling reply: %+v, %v", res, err)
	}
	_, err = decodeSamplingReply(read("sampling_error.json"))
	if !errors.Is(err, failure.Declined) {
		t.Errorf("sampling error reply: %v, want Declined", err)
	}
	el, _, err := decodeElicitation(read("elicitation.json"))
	if err != nil || el.Kind != "permission" || el.Tool != "mcp__files__delete" {
		t.Errorf("elicitation: %+v, %v", el, err)
	}
	er, err := decodeElicitationReply(read("elicitation_reply.json"))
	if err != nil || er.Content["name"] != "Ada" {
		t.Errorf("elicitation reply: %+v, %v", er, err)
	}
	u, err := decodeTaskUpdate(read("task.json"))
	if err != nil || u.State != "input-required" {
		t.Errorf("task: %+v, %v", u, err)
	}
	// Wrong version: a typed Protocol failure wrapping ErrVersion.
	_, err = decodeProgress([]byte(`{"v":2,"run":"r"}`))
	if !errors.Is(err, failure.Protocol) || !errors.Is(err, wire.ErrVersion) {
		t.Errorf("v2: %v", err)
	}
}

func FuzzDecodeElicitationDone(f *testing.F) {
	for _, s := range []string{`{"v":1,"id":"x","kind":"url","run":"r"}`, `{"v":1}`, `{"v":2,"id":"x"}`, `[]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decodeElicitationDone(data)
		checkErr(t, err, false)
		if err == nil && d.ID == "" {
			t.Fatalf("accepted a payload without an id: %q", data)
		}
	})
}

// TestDecodeRefusals: payloads of another version or with missing fields
// are Protocol failures.
func TestDecodeRefusals(t *testing.T) {
	for _, bad := range []string{`{"v":2,"id":"x"}`, `{"v":1}`, `nope`} {
		if _, err := decodeElicitationDone([]byte(bad)); !errors.Is(err, failure.Protocol) {
			t.Errorf("elicitation done %s: %v, want a Protocol failure", bad, err)
		}
	}
	if _, err := decodeFailure([]byte(`{"v":2,"kind":"timeout"}`)); !errors.Is(err, failure.Protocol) {
		t.Fatalf("failure of the wrong version: %v", err)
	}
}
