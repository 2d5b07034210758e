package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
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
