// Package a2atask is the task record and the ListTasks paging shared by
// the A2A task stores: the in-memory one of the a2a server
// (a2a/internal/taskstore) and the JetStream one (bus/store).
package a2atask

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// CallerOwner reads the user that the a2a server's authentication put in
// a2a-go's call context; outside a call it is the anonymous user.
func CallerOwner(ctx context.Context) string {
	if cc, ok := a2asrv.CallContextFrom(ctx); ok && cc.User != nil {
		return cc.User.Name
	}
	return ""
}

// Record is one stored task with its bookkeeping.
type Record struct {
	Task    *a2ago.Task `json:"task"`
	User    string      `json:"user"`
	Updated time.Time   `json:"updated"`
	// Written is when this version was stored, by the writer's clock (the
	// TTL runs from it; zero in records of older versions: the bucket's
	// timestamp of the revision).
	Written time.Time `json:"written,omitzero"`
	// Version is the task's version in its store (not encoded).
	Version int64 `json:"-"`
}

const (
	defaultPageSize   = 50
	maxPageSize       = 100
	defaultMaxHistory = 100
)

// cursor is the decoded form of a ListTasks page token: the scan window
// the page belongs to (the revision it starts at; 0: the bucket's start,
// and always 0 in memory) and, inside it, the last task listed (empty ID:
// the window's first page).
type cursor struct {
	Window  uint64       `json:"w,omitempty"`
	Updated time.Time    `json:"u"`
	ID      a2ago.TaskID `json:"i,omitempty"`
}

// encodePageToken encodes a ListTasks cursor.
func encodePageToken(c cursor) string {
	b, _ := json.Marshal(c) // a time, a number and a string always encode
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePageToken parses a page token produced by ListTasks. It is the
// parser of outside input in this package (clients send the token back).
func decodePageToken(tok string) (cursor, error) {
	if len(tok) > 512 {
		return cursor{}, fmt.Errorf("page token too long: %w", a2ago.ErrInvalidParams)
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return cursor{}, fmt.Errorf("malformed page token: %w", a2ago.ErrInvalidParams)
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || (c.ID == "" && c.Window == 0) {
		return cursor{}, fmt.Errorf("malformed page token: %w", a2ago.ErrInvalidParams)
	}
	return c, nil
}

// before reports whether a sorts before b in ListTasks order: status time
// descending, then id descending.
func before(a, b *Record) int {
	if c := b.Updated.Compare(a.Updated); c != 0 {
		return c
	}
	return strings.Compare(string(b.Task.ID), string(a.Task.ID))
}

// ListParams is a checked ListTasks request.
type ListParams struct {
	req      *a2ago.ListTasksRequest
	pageSize int
	hist     int
	cur      cursor // zero: the first page
}

// From is the revision the page's scan window starts at (0: the store's
// start, and always 0 in memory).
func (p ListParams) From() uint64 { return p.cur.Window }

// ParseList checks a ListTasks request and decodes its page token.
func ParseList(req *a2ago.ListTasksRequest) (ListParams, error) {
	p := ListParams{req: req, pageSize: req.PageSize, hist: defaultMaxHistory}
	switch {
	case p.pageSize == 0:
		p.pageSize = defaultPageSize
	case p.pageSize < 1 || p.pageSize > maxPageSize:
		return p, fmt.Errorf("pageSize must be between 1 and %d, got %d: %w", maxPageSize, p.pageSize, a2ago.ErrInvalidParams)
	}
	if req.HistoryLength != nil {
		if *req.HistoryLength < 0 {
			return p, fmt.Errorf("historyLength must not be negative: %w", a2ago.ErrInvalidParams)
		}
		p.hist = *req.HistoryLength
	}
	if req.PageToken != "" {
		c, err := decodePageToken(req.PageToken)
		if err != nil {
			return p, err
		}
		p.cur = c
	}
	return p, nil
}

// Window is where a page's records came from: the revision the scan
// window starts at, and the one the next window starts at (0: none).
type Window struct{ Start, Next uint64 }

// Page filters, sorts and pages the records of one window for one owner.
// TotalSize counts the window's matching tasks (all of them when the
// window is the whole store).
func Page(recs []*Record, owner string, p ListParams, win Window) *a2ago.ListTasksResponse {
	req := p.req
	var kept []*Record
	for _, r := range recs {
		t := r.Task
		if r.User != owner ||
			(req.ContextID != "" && t.ContextID != req.ContextID) ||
			(req.Status != a2ago.TaskStateUnspecified && t.Status.State != req.Status) ||
			(req.StatusTimestampAfter != nil && r.Updated.Before(*req.StatusTimestampAfter)) {
			continue
		}
		kept = append(kept, r)
	}
	slices.SortFunc(kept, before)
	total := len(kept)
	if p.cur.ID != "" {
		pivot := &Record{Task: &a2ago.Task{ID: p.cur.ID}, Updated: p.cur.Updated}
		i, _ := slices.BinarySearchFunc(kept, pivot, before)
		for i < len(kept) && before(kept[i], pivot) <= 0 {
			i++
		}
		kept = kept[i:]
	}
	next := ""
	switch {
	case len(kept) > p.pageSize:
		last := kept[p.pageSize-1]
		next = encodePageToken(cursor{Window: win.Start, Updated: last.Updated, ID: last.Task.ID})
		kept = kept[:p.pageSize]
	case win.Next > 0:
		next = encodePageToken(cursor{Window: win.Next})
	}
	out := make([]*a2ago.Task, 0, len(kept))
	for _, r := range kept {
		t := CloneTask(r.Task)
		t.History = trimHistory(t.History, p.hist)
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		out = append(out, t)
	}
	return &a2ago.ListTasksResponse{Tasks: out, TotalSize: total, PageSize: p.pageSize, NextPageToken: next}
}

func trimHistory(h []*a2ago.Message, n int) []*a2ago.Message {
	if n == 0 {
		return []*a2ago.Message{}
	}
	if n > 0 && len(h) > n {
		return h[len(h)-n:]
	}
	return h
}

// CloneTask copies what a2a-go's task manager mutates in place: the task
// struct, its slices and metadata, and each artifact's struct and parts
// slice. Messages and parts are immutable once stored and are shared.
func CloneTask(t *a2ago.Task) *a2ago.Task {
	if t == nil {
		return nil
	}
	c := *t
	c.History = slices.Clone(t.History)
	c.Metadata = maps.Clone(t.Metadata)
	if t.Artifacts != nil {
		c.Artifacts = make([]*a2ago.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			if a == nil {
				continue
			}
			ac := *a
			ac.Parts = slices.Clone(a.Parts)
			ac.Metadata = maps.Clone(a.Metadata)
			c.Artifacts[i] = &ac
		}
	}
	return &c
}

// StatusTime is the time a task's status was recorded, or now.
func StatusTime(t *a2ago.Task, now time.Time) time.Time {
	if t.Status.Timestamp != nil && !t.Status.Timestamp.IsZero() {
		return t.Status.Timestamp.UTC()
	}
	return now.UTC()
}

// Validate refuses a task without an id or a context id.
func Validate(t *a2ago.Task) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("task id is required: %w", a2ago.ErrInvalidParams)
	}
	if t.ContextID == "" {
		return fmt.Errorf("task context id is required: %w", a2ago.ErrInvalidParams)
	}
	return nil
}

// DefaultTTL is how long a task is kept after its last write, by default.
const DefaultTTL = 24 * time.Hour
