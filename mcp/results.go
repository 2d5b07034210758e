package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/failure"
)

// resultStore keeps tool results too large for the model in files.
type resultStore struct {
	dir   string
	owned bool
	mu    sync.Mutex
	files map[string]string // id -> path
}

func newResultStore(dir string, owned bool) *resultStore {
	return &resultStore{dir: dir, owned: owned, files: map[string]string{}}
}

func (r *resultStore) close() {
	if r.owned {
		_ = os.RemoveAll(r.dir)
	}
}

// previewBytes is how much of a spilled result the model sees at once.
const previewBytes = 2000

// spill writes res (as the model would read it, binary parts described) to
// a file and returns a pointer result.
func (r *resultStore) spill(tool string, res *agent.Result) (*agent.Result, error) {
	text := res.Text()
	id := "res_" + strings.ToLower(rand.Text()[:12])
	path := filepath.Join(r.dir, id+".txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceMCP, Tool: tool, Op: "spill",
			Message: "the result was too large and could not be saved", Err: err}
	}
	r.mu.Lock()
	r.files[id] = path
	r.mu.Unlock()
	preview := text[:min(len(text), previewBytes)]
	msg := fmt.Sprintf("The result of %s is %d bytes, too large to show at once. It was saved as result %q. "+
		"Read it in parts with the tool %s, e.g. {\"id\": %q, \"offset\": %d, \"length\": 20000}. The first %d bytes:\n%s",
		tool, len(text), id, ReadResultTool, id, len(preview), len(preview), preview)
	out := &agent.Result{IsError: res.IsError, Parts: []agent.Part{{Type: agent.PartText, Text: msg}}}
	return out, nil
}

// read returns length bytes of a saved result from offset.
func (r *resultStore) read(id string, offset, length int) (string, int, error) {
	r.mu.Lock()
	path, ok := r.files[id]
	r.mu.Unlock()
	if !ok {
		return "", 0, fmt.Errorf("there is no saved result %q", id)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	size := int(st.Size())
	if offset < 0 || offset > size {
		return "", size, fmt.Errorf("offset %d is outside the result (0 to %d)", offset, size)
	}
	buf := make([]byte, min(length, size-offset))
	if _, err := f.ReadAt(buf, int64(offset)); err != nil && err != io.EOF {
		return "", size, err
	}
	return string(buf), size, nil
}

// Names of the cross-server tools.
const (
	ReadResultTool    = "mcp_read_result"
	ListResourcesTool = "mcp_list_resources"
	ReadResourceTool  = "mcp_read_resource"
	GetPromptTool     = "mcp_get_prompt"
)

func (m *Manager) builtinTools(anyRes, anyPrompts bool) []agent.Tool {
	src := agent.Provenance{Kind: "mcp"}
	tools := []agent.Tool{agent.NewFuncTool(agent.ToolSpec{Name: ReadResultTool, ReadOnly: true, Source: src,
		Description: "Read part of a large MCP tool result that was saved instead of shown.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"offset":{"type":"integer","minimum":0},"length":{"type":"integer","minimum":1,"maximum":100000}},"required":["id"]}`)},
		func(_ context.Context, raw json.RawMessage) (*agent.Result, error) {
			var a struct {
				ID     string `json:"id"`
				Offset int    `json:"offset"`
				Length int    `json:"length"`
			}
			if err := json.Unmarshal(raw, &a); err != nil {
				return agent.ErrorResult("invalid arguments: %v", err), nil
			}
			if a.Length <= 0 {
				a.Length = 20000
			}
			text, size, err := m.results.read(a.ID, a.Offset, a.Length)
			if err != nil {
				return agent.ErrorResult("%v", err), nil
			}
			end := a.Offset + len(text)
			note := fmt.Sprintf("[bytes %d to %d of %d]", a.Offset, end, size)
			if end < size {
				note += fmt.Sprintf(" (continue with offset %d)", end)
			}
			return agent.TextResult(note + "\n" + text), nil
		})}
	if m.cfg.DisableResourceTools {
		return tools
	}
	if anyRes {
		tools = append(tools, m.listResourcesTool(src), m.readResourceTool(src))
	}
	if anyPrompts {
		tools = append(tools, m.getPromptTool(src))
	}
	return tools
}
