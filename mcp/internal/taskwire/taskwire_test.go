package taskwire

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tasks of SEP-2663's examples, and broken ones.
var (
	working = `{"resultType":"task","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working",` +
		`"statusMessage":"The operation is now in progress.","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":60000,"pollIntervalMs":5000}`
	inputRequired = `{"resultType":"complete","taskId":"t1","status":"input_required","createdAt":"2025-11-25T10:30:00Z",` +
		`"lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000,"inputRequests":{"name":{"method":"elicitation/create",` +
		`"params":{"mode":"form","message":"Please enter your name.","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}}`
	completed = `{"taskId":"t1","status":"completed","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z",` +
		`"ttlMs":null,"result":{"content":[{"type":"text","text":"Operation completed successfully."}],"isError":false}}`
	failed = `{"taskId":"t1","status":"failed","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":3600000,` +
		`"statusMessage":"Tool execution failed: API rate limit exceeded","error":{"code":-32603,"message":"API rate limit exceeded"}}`
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, in string
		ok       bool
	}{
		{"working", working, true},
		{"input required", inputRequired, true},
		{"completed", completed, true},
		{"failed", failed, true},
		{"cancelled", `{"taskId":"t","status":"cancelled","createdAt":"","lastUpdatedAt":"","ttlMs":null}`, true},
		{"not an object", `[1]`, false},
		{"no id", `{"status":"working"}`, false},
		{"control character in the id", `{"taskId":"a\u0000b","status":"working"}`, false},
		{"unknown status", `{"taskId":"t","status":"sleeping"}`, false},
		{"input required without requests", `{"taskId":"t","status":"input_required"}`, false},
		{"input request of an unknown method", `{"taskId":"t","status":"input_required","inputRequests":{"k":{"method":"tools/call"}}}`, false},
		{"completed without a result", `{"taskId":"t","status":"completed"}`, false},
		{"completed with a result that is no object", `{"taskId":"t","status":"completed","result":[1]}`, false},
		{"failed without an error", `{"taskId":"t","status":"failed"}`, false},
		{"negative interval", `{"taskId":"t","status":"working","pollIntervalMs":-1}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			task, err := Parse([]byte(c.in))
			if c.ok != (err == nil) {
				t.Fatalf("Parse: %v (want ok %v)", err, c.ok)
			}
			if err == nil && task.TaskID == "" {
				t.Errorf("task %+v", task)
			}
			if !c.ok && c.in[0] == '{' && !errors.Is(err, ErrInvalid) && c.name != "not an object" {
				t.Errorf("error %v is not ErrInvalid", err)
			}
		})
	}
}

func TestInterval(t *testing.T) {
	ms := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		poll *int64
		want time.Duration
	}{
		{nil, DefaultPoll}, {ms(5000), 5 * time.Second}, {ms(0), MinPoll}, {ms(1), MinPoll},
		{ms(1 << 62), MaxPoll}, {ms(31_000), MaxPoll},
	} {
		if got := (&Task{PollIntervalMs: c.poll}).Interval(); got != c.want {
			t.Errorf("pollIntervalMs %v: %v, want %v", c.poll, got, c.want)
		}
	}
}

func TestExpires(t *testing.T) {
	task, err := Parse([]byte(working))
	if err != nil {
		t.Fatal(err)
	}
	exp, ok := task.Expires()
	if want := time.Date(2025, 11, 25, 10, 31, 0, 0, time.UTC); !ok || !exp.Equal(want) {
		t.Errorf("expires %v %v, want %v", exp, ok, want)
	}
	task, _ = Parse([]byte(completed))
	if _, ok := task.Expires(); ok {
		t.Error("a task without a TTL expires")
	}
}

func TestDeclared(t *testing.T) {
	with := map[string]any{metaClientCapabilities: map[string]any{"extensions": map[string]any{Extension: map[string]any{}}}}
	without := map[string]any{metaClientCapabilities: map[string]any{"extensions": map[string]any{"other": map[string]any{}}}}
	caps := &gomcp.ClientCapabilities{}
	caps.AddExtension(Extension, nil)
	for _, c := range []struct {
		name string
		meta map[string]any
		caps *gomcp.ClientCapabilities
		want bool
	}{
		{"in the request", with, nil, true},
		{"the request's capabilities win", without, caps, false},
		{"at initialize", nil, caps, true},
		{"nowhere", nil, nil, false},
	} {
		if got := Declared(c.meta, c.caps); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

// FuzzParse: a task from outside never panics the parser, and a task it
// accepts encodes and parses again to the same task.
func FuzzParse(f *testing.F) {
	for _, s := range []string{working, inputRequired, completed, failed, `{"taskId":"t","status":"working","pollIntervalMs":9223372036854775807}`,
		`{"taskId":"t","status":"working","ttlMs":9223372036854775807,"createdAt":"2025-11-25T10:30:00Z"}`, `{}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := Parse(data)
		if err != nil {
			return
		}
		if d := task.Interval(); d < MinPoll || d > MaxPoll {
			t.Fatalf("interval %v out of bounds", d)
		}
		task.Expires()
		again, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(again); err != nil {
			t.Fatalf("a parsed task does not parse again: %v\n%s", err, again)
		}
	})
}

// TestListenWire: a listen's parameters carry the task ids in its
// notifications filter, as SEP-2663 names them; an acknowledgement's
// valid ids are read, others left out; a notification is a checked task.
func TestListenWire(t *testing.T) {
	raw, err := json.Marshal(&ListenParams{Notifications: TaskSubscriptions{TaskIDs: []string{"t1"}}})
	if err != nil || string(raw) != `{"notifications":{"taskIds":["t1"]}}` {
		t.Fatalf("listen params %s, %v", raw, err)
	}
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"agreed", `{"notifications":{"taskIds":["t1","t2"]},"_meta":{"io.modelcontextprotocol/subscriptionId":3}}`, []string{"t1", "t2"}},
		{"none", `{"notifications":{}}`, nil},
		{"invalid ids left out", `{"notifications":{"taskIds":["",7,"ok","a\u0001b"]}}`, []string{"ok"}},
		{"not an object", `[1]`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ParseAck([]byte(c.in)); !slices.Equal(got, c.want) {
				t.Fatalf("ParseAck(%s) = %q; want %q", c.in, got, c.want)
			}
		})
	}
	if _, err := ParseNotification([]byte(completed)); err != nil {
		t.Fatalf("a completed task's notification: %v", err)
	}
	if _, err := ParseNotification([]byte(`{"taskId":"t","status":"completed"}`)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a completed task without its result: %v; want ErrInvalid", err)
	}
}

// FuzzListenWire: a notification or acknowledgement from outside never
// panics; the ids read are valid task ids within the bound, and a parsed
// notification's task parses again.
func FuzzListenWire(f *testing.F) {
	for _, s := range []string{`{"notifications":{"taskIds":["t1"]}}`, completed, working, `{"notifications":{"taskIds":[null,""]}}`, `{}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ids := ParseAck(data)
		if len(ids) > maxListenIDs {
			t.Fatalf("%d ids, more than %d", len(ids), maxListenIDs)
		}
		for _, id := range ids {
			if !printable(id, maxTaskID) {
				t.Fatalf("id %q is not a valid task id", id)
			}
		}
		task, err := ParseNotification(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseNotification(again); err != nil {
			t.Fatalf("a parsed notification does not parse again: %v\n%s", err, again)
		}
	})
}
