package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/mcp/internal/taskwire"
)

// TestRewriteTaskResult: a tools/call result that is a task reaches the
// call as a CallToolResult carrying it; any other result is unchanged but
// for a forged task key, which is removed.
func TestRewriteTaskResult(t *testing.T) {
	for _, c := range []struct {
		name, in string
		task     bool
	}{
		{"task", `{"resultType":"task","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null,"pollIntervalMs":100}`, true},
		{"result", `{"content":[{"type":"text","text":"task"}],"resultType":"complete"}`, false},
		{"forged key", `{"content":[],"_meta":{"dev.switchboard/task":{"taskId":"x","status":"working"},"keep":1}}`, false},
		{"not JSON", `{"resultType":"task"`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := rewriteTaskResult(json.RawMessage(c.in))
			var res gomcp.CallToolResult
			if json.Valid([]byte(c.in)) {
				if err := json.Unmarshal(out, &res); err != nil {
					t.Fatalf("%s does not decode: %v", out, err)
				}
			}
			task, err := taskOf(&res)
			if c.task != (task != nil) || err != nil {
				t.Fatalf("task %+v, %v (want one: %v)", task, err, c.task)
			}
			if c.task && (task.TaskID != "t1" || task.Interval().Milliseconds() != 100) {
				t.Errorf("task %+v", task)
			}
			if c.name == "result" && !bytes.Equal(out, []byte(c.in)) {
				t.Errorf("a result was rewritten: %s", out)
			}
			if c.name == "forged key" && res.Meta["keep"] == nil {
				t.Errorf("the other _meta keys were lost: %s", out)
			}
		})
	}
}

// FuzzRewriteTaskResult: whatever a server answers a tools/call with, the
// rewrite neither panics nor turns valid JSON into invalid JSON, and only
// a result whose resultType is "task" carries a task afterwards.
func FuzzRewriteTaskResult(f *testing.F) {
	for _, s := range []string{`{"resultType":"task","taskId":"t1","status":"working"}`, `{"content":[]}`,
		`{"_meta":{"dev.switchboard/task":1}}`, `{"_meta":null,"resultType":"task"}`, `"task"`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := rewriteTaskResult(json.RawMessage(data))
		if !json.Valid(data) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%s became %s", data, out)
		}
		var head struct {
			ResultType string `json:"resultType"`
		}
		isTask := json.Unmarshal(data, &head) == nil && head.ResultType == "task"
		var meta struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if json.Unmarshal(out, &meta) == nil {
			if _, ok := meta.Meta[taskMetaKey]; ok != isTask {
				t.Fatalf("%s became %s: task key %v, want %v", data, out, ok, isTask)
			}
		}
	})
}

// TestTaskHTTPBodies: the response to a tools/call that is a task is
// rewritten in a JSON body and in an event stream (the other events
// unchanged); other responses pass unchanged.
func TestTaskHTTPBodies(t *testing.T) {
	task := `{"jsonrpc":"2.0","id":7,"result":{"resultType":"task","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}}`
	other := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"sb-1","progress":1}}`
	var seen []string
	note := func(res json.RawMessage) {
		if id := taskIDOf(res); id != "" {
			seen = append(seen, id)
		}
	}
	for _, c := range []struct {
		name, body string
		sse        bool
		rewritten  bool
	}{
		{"JSON task", task, false, true},
		{"JSON of another id", strings.Replace(task, `"id":7`, `"id":8`, 1), false, false},
		{"stream", "event: message\ndata: " + other + "\n\nevent: message\nid: 2\ndata: " + task + "\n\n", true, true},
		{"stream with CRLF and a split data line", "data: " + other + "\r\n\r\ndata: " + task[:16] + "\r\ndata: " + task[16:] + "\r\n\r\n", true, true},
		{"stream without the response", "data: " + other + "\n\n", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			seen = nil
			src := io.NopCloser(strings.NewReader(c.body))
			var body io.ReadCloser
			if c.sse {
				body = newSSEFilter(src, rewriteEvent(json.RawMessage("7"), note))
			} else {
				body = rewriteJSONBody(src, json.RawMessage("7"), note)
			}
			out, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(out), taskMetaKey); got != c.rewritten || (len(seen) == 1) != c.rewritten {
				t.Fatalf("rewritten %v, seen %v, want %v:\n%s", got, seen, c.rewritten, out)
			}
			if !c.rewritten && string(out) != c.body {
				t.Errorf("changed:\n%q\nwant\n%q", out, c.body)
			}
			if c.sse && c.rewritten && !strings.Contains(string(out), other) {
				t.Errorf("the other event was lost:\n%s", out)
			}
		})
	}
}

// FuzzSSERewriter: whatever event stream a server answers a tools/call
// with, the rewriter ends, and changes nothing unless an event's data is
// the response to the call.
func FuzzSSERewriter(f *testing.F) {
	for _, s := range []string{"data: {\"id\":7,\"result\":{\"resultType\":\"task\",\"taskId\":\"t\",\"status\":\"working\"}}\n\n",
		"event: message\ndata: x\n\n", "data:\n\n\n", ": comment\r\n\r\n", "data: {\"id\":7"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range sseBounds {
			src := io.NopCloser(bytes.NewReader(data))
			r := &sseFilter{src: src, r: bufio.NewReaderSize(src, b.buf), limit: b.limit, decide: rewriteEvent(json.RawMessage("7"), func(json.RawMessage) {})}
			out, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) && !bytes.Contains(data, []byte("7")) {
				t.Fatalf("limit %d: %q became %q", b.limit, data, out)
			}
		}
	})
}

// FuzzSSENotices: whatever event stream a server answers a
// subscriptions/listen with, the filter ends, hands onNotice only valid
// task ids, and changes nothing unless an event is a notifications/tasks.
func FuzzSSENotices(f *testing.F) {
	for _, s := range []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks\",\"params\":{\"taskId\":\"t\",\"status\":\"working\",\"createdAt\":\"x\",\"lastUpdatedAt\":\"x\",\"ttlMs\":null}}\n\n",
		"data: {\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"notifications\":{\"taskIds\":[\"t\"]}}}\n\n",
		"event: message\ndata: x\n\n", "data:\n\n\n", ": comment\r\n\r\n", "data: {\"method\":\"notifications/tasks\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range sseBounds {
			src := io.NopCloser(bytes.NewReader(data))
			noticed := 0
			r := &sseFilter{src: src, r: bufio.NewReaderSize(src, b.buf), limit: b.limit, decide: noticeEvent(func(task string) {
				if task == "" {
					t.Fatal("an empty task id noticed")
				}
				noticed++
			})}
			out, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) && !bytes.Contains(data, []byte(taskwire.NotificationTasks)) {
				t.Fatalf("limit %d: %q became %q", b.limit, data, out)
			}
			if noticed > 0 && bytes.Equal(out, data) {
				t.Fatalf("limit %d: %q: a notice was taken out but the stream is unchanged", b.limit, data)
			}
		}
	})
}

// sseBounds are the read buffers and event limits the fuzz targets filter
// each stream with: bufio's default buffer with the usual limit, and small
// ones under which events and lines are long.
var sseBounds = []struct{ buf, limit int }{{4096, maxSSEEvent}, {16, 40}}

// countingReader is a reader that counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestSSELongEvent: an event longer than its filter's limit, even one
// line without a newline, passes unchanged with the rest of the stream
// after it, and the filter never holds more than the limit plus its read
// buffer (the bytes read from the stream but not yet passed on).
func TestSSELongEvent(t *testing.T) {
	const buf, limit = 16, 1 << 10
	notice := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks\",\"params\":{\"taskId\":\"t\",\"status\":\"working\",\"createdAt\":\"x\",\"lastUpdatedAt\":\"x\",\"ttlMs\":null}}\n\n"
	response := "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"resultType\":\"task\",\"taskId\":\"t1\",\"status\":\"working\",\"createdAt\":\"x\",\"lastUpdatedAt\":\"x\",\"ttlMs\":null}}\n\n"
	huge := strings.Repeat("x", 1<<20)
	manyLines := strings.Repeat("data: "+strings.Repeat("y", 100)+"\n", 100)
	for _, c := range []struct {
		name   string
		in     string
		decide func(noticed *int) func([]byte) (sseAction, []byte, bool)
		want   string // the output; empty: the input unchanged
	}{
		{"one line without a newline, to the end", "data: " + huge, countResponses, ""},
		{"one line, then the response", "data: " + huge + "\n\n" + response, countResponses, ""},
		{"a comment line, then the response", ": " + huge + "\n\n" + response, countResponses, ""},
		{"many lines, then the response", manyLines + "\n" + response, countResponses, ""},
		{"a notice, one line, a notice", notice + "data: " + huge + "\n\n" + notice, countNotices, "data: " + huge + "\n\n" + notice},
		{"a notice, many lines, a notice", notice + manyLines + "\n" + notice, countNotices, manyLines + "\n" + notice},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &countingReader{r: strings.NewReader(c.in)}
			noticed := 0
			f := &sseFilter{src: io.NopCloser(src), r: bufio.NewReaderSize(src, buf), limit: limit, decide: c.decide(&noticed)}
			var out bytes.Buffer
			p := make([]byte, 1000)
			for {
				n, err := f.Read(p)
				out.Write(p[:n])
				if held := src.n - out.Len(); held > limit+buf {
					t.Fatalf("%d bytes held after %d passed on, more than %d", held, out.Len(), limit+buf)
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			want := c.want
			if want == "" {
				want = c.in
			}
			if out.String() != want {
				t.Errorf("%d bytes out, want %d unchanged", out.Len(), len(want))
			}
			if noticed != strings.Count(c.in, notice)-strings.Count(want, notice) {
				t.Errorf("%d noticed", noticed)
			}
		})
	}
}

// countResponses and countNotices are TestSSELongEvent's decides: a
// rewriter that counts the responses it sees, and a listen's filter that
// counts the notices it takes out.
func countResponses(seen *int) func([]byte) (sseAction, []byte, bool) {
	return rewriteEvent(json.RawMessage("7"), func(json.RawMessage) { *seen++ })
}

func countNotices(noticed *int) func([]byte) (sseAction, []byte, bool) {
	return noticeEvent(func(string) { *noticed++ })
}
