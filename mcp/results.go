package mcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// Lifetime of saved results: each is removed ResultTTL after it was saved
// (default resultTTL), and the oldest go first when more than
// maxSavedResults or maxSavedBytes are kept; Close removes the rest.
const (
	resultTTL       = time.Hour
	maxSavedResults = 256
	maxSavedBytes   = 512 << 20
)

// resultStore keeps tool results too large for the model in files: the
// result's text (binary parts described) as one item, and each binary
// part (image, audio, blob) as an item of its own, a file named with its
// MIME type's extension. Only the files it wrote are ever removed, also
// in a caller's ResultDir.
type resultStore struct {
	dir   string
	owned bool
	ttl   time.Duration // <0: until close

	mu     sync.Mutex
	saved  []*savedResult        // oldest first
	items  map[string]*savedItem // by id
	bytes  int64
	timer  *time.Timer
	closed bool
}

// savedResult is one spilled result: its items, removed together.
type savedResult struct {
	id      string
	items   []*savedItem
	bytes   int64
	expires time.Time
}

// savedItem is one file of a saved result.
type savedItem struct {
	id, path string
	part     agent.Part // the type and MIME type of a binary part; Data unset
	binary   bool
	size     int
}

func newResultStore(dir string, owned bool, ttl time.Duration) *resultStore {
	if ttl == 0 {
		ttl = resultTTL
	}
	return &resultStore{dir: dir, owned: owned, ttl: ttl, items: map[string]*savedItem{}}
}

func (r *resultStore) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.owned {
		_ = os.RemoveAll(r.dir)
		return
	}
	for len(r.saved) > 0 {
		r.removeOldest()
	}
}

// previewBytes is how much of a spilled result the model sees at once.
const previewBytes = 2000

// spill writes res to files and returns a pointer result: the text's size
// and first bytes, and the id of every part saved, for mcp_read_result.
func (r *resultStore) spill(tool string, res *agent.Result) (*agent.Result, error) {
	id := "res_" + strings.ToLower(rand.Text()[:12])
	sr := &savedResult{id: id}
	fail := func(err error) (*agent.Result, error) {
		for _, it := range sr.items {
			_ = os.Remove(it.path)
		}
		return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceMCP, Tool: tool, Op: "spill",
			Message: "the result was too large and could not be saved", Err: err}
	}
	var text strings.Builder
	var listing strings.Builder
	for i, p := range res.Parts {
		if i > 0 {
			text.WriteByte('\n')
		}
		if len(p.Data) == 0 || p.Type == agent.PartText || p.Type == agent.PartJSON || p.Type == agent.PartResource && p.Text != "" {
			text.WriteString((&agent.Result{Parts: []agent.Part{p}}).Text())
			continue
		}
		it := &savedItem{id: fmt.Sprintf("%s.%d", id, i+1), binary: true, size: len(p.Data),
			part: agent.Part{Type: p.Type, MIMEType: p.MIMEType, URI: p.URI, Name: p.Name}}
		it.path = filepath.Join(r.dir, it.id+extension(p.MIMEType))
		if err := os.WriteFile(it.path, p.Data, 0o600); err != nil {
			return fail(err)
		}
		sr.items = append(sr.items, it)
		sr.bytes += int64(it.size)
		desc := fmt.Sprintf("%s %s, %d bytes", p.Type, cmp.Or(p.MIMEType, "application/octet-stream"), len(p.Data))
		if p.URI != "" {
			desc = fmt.Sprintf("%s %s", desc, p.URI)
		}
		fmt.Fprintf(&text, "[%s: saved as result %q]", desc, it.id)
		fmt.Fprintf(&listing, "\n- %q: %s", it.id, desc)
	}
	body := text.String()
	main := &savedItem{id: id, path: filepath.Join(r.dir, id+".txt"), size: len(body)}
	if err := os.WriteFile(main.path, []byte(body), 0o600); err != nil {
		return fail(err)
	}
	sr.items = append([]*savedItem{main}, sr.items...)
	sr.bytes += int64(main.size)
	r.add(sr)

	preview := body[:min(len(body), previewBytes)]
	// The size is the whole result's: the text and every binary part (a
	// result that is one large image has a short text).
	size := fmt.Sprintf("%d bytes", sr.bytes)
	if binary := sr.bytes - int64(main.size); binary > 0 {
		size = fmt.Sprintf("%d bytes (%d of text, %d in %d binary part(s))", sr.bytes, main.size, binary, len(sr.items)-1)
	}
	msg := fmt.Sprintf("The result of %s is %s, too large to show at once. It was saved as result %q. "+
		"Read its text in parts with the tool %s, e.g. {\"id\": %q, \"offset\": %d, \"length\": 20000}.",
		tool, size, id, nameReadResult, id, len(preview))
	if listing.Len() > 0 {
		msg += " Its binary parts were saved too; read them with the same tool by their ids (in base64 pages, " +
			"or whole when small enough):" + listing.String()
	}
	msg += fmt.Sprintf("\nThe first %d bytes:\n%s", len(preview), preview)
	return &agent.Result{IsError: res.IsError, Parts: []agent.Part{{Type: agent.PartText, Text: msg}}}, nil
}

// extension returns a file name extension for a MIME type (".bin" when
// none is known).
func extension(mimeType string) string {
	if exts, err := mime.ExtensionsByType(mimeType); err == nil && len(exts) > 0 {
		slices.Sort(exts)
		return exts[0]
	}
	return ".bin"
}

// add records sr, removes what is past its lifetime or over the caps, and
// arms the expiry timer.
func (r *resultStore) add(sr *savedResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		for _, it := range sr.items {
			_ = os.Remove(it.path)
		}
		return
	}
	if r.ttl > 0 {
		sr.expires = time.Now().Add(r.ttl)
	}
	r.saved = append(r.saved, sr)
	r.bytes += sr.bytes
	for _, it := range sr.items {
		r.items[it.id] = it
	}
	r.pruneLocked()
}

// pruneLocked removes expired results and the oldest beyond the caps
// (never the newest), then arms the timer for the next expiry.
func (r *resultStore) pruneLocked() {
	now := time.Now()
	for len(r.saved) > 1 && (len(r.saved) > maxSavedResults || r.bytes > maxSavedBytes) ||
		len(r.saved) > 0 && !r.saved[0].expires.IsZero() && !now.Before(r.saved[0].expires) {
		r.removeOldest()
	}
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if len(r.saved) > 0 && !r.saved[0].expires.IsZero() {
		r.timer = time.AfterFunc(time.Until(r.saved[0].expires), r.expire)
	}
}

func (r *resultStore) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.pruneLocked()
	}
}

func (r *resultStore) removeOldest() {
	sr := r.saved[0]
	r.saved = r.saved[1:]
	r.bytes -= sr.bytes
	for _, it := range sr.items {
		delete(r.items, it.id)
		_ = os.Remove(it.path)
	}
}

// readWholeMax is the most one read of a binary item returns whole, as the
// part itself rather than base64 text.
const readWholeMax = 1 << 20

// read returns length bytes of a saved item from offset: text as text; a
// binary part as base64 text, or, when the read covers the whole part and
// it is at most readWholeMax, as the part itself.
func (r *resultStore) read(id string, offset, length int) (*agent.Result, error) {
	r.mu.Lock()
	it, ok := r.items[id]
	ttl := r.ttl
	r.mu.Unlock()
	if !ok {
		life := "until the session ends"
		if ttl > 0 {
			life = "for " + ttl.String()
		}
		return nil, fmt.Errorf("there is no saved result %q (results are kept %s, at most %d)", id, life, maxSavedResults)
	}
	f, err := os.Open(it.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := it.size
	if offset < 0 || offset > size {
		return nil, fmt.Errorf("offset %d is outside the result (0 to %d)", offset, size)
	}
	buf := make([]byte, min(length, size-offset))
	if _, err := f.ReadAt(buf, int64(offset)); err != nil && err != io.EOF {
		return nil, err
	}
	end := offset + len(buf)
	if !it.binary {
		note := fmt.Sprintf("[bytes %d to %d of %d]", offset, end, size)
		if end < size {
			note += fmt.Sprintf(" (continue with offset %d)", end)
		}
		return agent.TextResult(note + "\n" + string(buf)), nil
	}
	desc := fmt.Sprintf("%s %s", it.part.Type, cmp.Or(it.part.MIMEType, "application/octet-stream"))
	if offset == 0 && end == size && size <= readWholeMax {
		p := it.part
		p.Data = buf
		return &agent.Result{Parts: []agent.Part{{Type: agent.PartText, Text: fmt.Sprintf("[%s, all %d bytes]", desc, size)}, p}}, nil
	}
	note := fmt.Sprintf("[bytes %d to %d of %d of %s, base64]", offset, end, size, desc)
	if end < size {
		note += fmt.Sprintf(" (continue with offset %d)", end)
	}
	return agent.TextResult(note + "\n" + base64.StdEncoding.EncodeToString(buf)), nil
}

// Names of the cross-server tools.
const (
	nameReadResult    = "mcp_read_result"
	nameListResources = "mcp_list_resources"
	nameReadResource  = "mcp_read_resource"
	nameGetPrompt     = "mcp_get_prompt"
)

func (m *Manager) builtinTools(anyRes, anyPrompts bool) []agent.Tool {
	src := agent.Provenance{Kind: failure.SourceMCP}
	tools := []agent.Tool{agent.NewFuncTool(agent.ToolSpec{Name: nameReadResult, ReadOnly: true, Source: src,
		Description: "Read part of a large MCP tool result that was saved instead of shown: its text, or one of its saved binary parts by that part's id.",
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
			res, err := m.results.read(a.ID, a.Offset, a.Length)
			if err != nil {
				return agent.ErrorResult("%v", err), nil
			}
			return res, nil
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
