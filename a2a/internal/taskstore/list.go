package taskstore

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

// callerOwner reads the user that the a2a server's authentication put in
// a2a-go's call context; outside a call it is the anonymous user.
func callerOwner(ctx context.Context) string {
	if cc, ok := a2asrv.CallContextFrom(ctx); ok && cc.User != nil {
		return cc.User.Name
	}
	return ""
}

// record is one stored task with its bookkeeping.
type record struct {
	Task    *a2ago.Task `json:"task"`
	User    string      `json:"user"`
	Updated time.Time   `json:"updated"`
	// Written is when this version was stored, by the writer's clock (the
	// TTL runs from it; zero in records of older versions: the bucket's
	// timestamp of the revision).
	Written time.Time `json:"written,omitzero"`
	version int64
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

// EncodePageToken encodes a ListTasks cursor.
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
func before(a, b *record) int {
	if c := b.Updated.Compare(a.Updated); c != 0 {
		return c
	}
	return strings.Compare(string(b.Task.ID), string(a.Task.ID))
}

// listParams is a checked ListTasks request.
type listParams struct {
	req      *a2ago.ListTasksRequest
	pageSize int
	hist     int
	cur      cursor // zero: the first page
}

// parseList checks a ListTasks request and decodes its page token.
func parseList(req *a2ago.ListTasksRequest) (listParams, error) {
	p := listParams{req: req, pageSize: req.PageSize, hist: defaultMaxHistory}
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

// window is where a page's records came from: the revision the scan
// window starts at, and the one the next window starts at (0: none).
type window struct{ start, next uint64 }

// page filters, sorts and pages the records of one window for one owner.
// TotalSize counts the window's matching tasks (all of them when the
// window is the whole store).
func page(recs []*record, owner string, p listParams, win window) *a2ago.ListTasksResponse {
	req := p.req
	var kept []*record
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
		pivot := &record{Task: &a2ago.Task{ID: p.cur.ID}, Updated: p.cur.Updated}
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
		next = encodePageToken(cursor{Window: win.start, Updated: last.Updated, ID: last.Task.ID})
		kept = kept[:p.pageSize]
	case win.next > 0:
		next = encodePageToken(cursor{Window: win.next})
	}
	out := make([]*a2ago.Task, 0, len(kept))
	for _, r := range kept {
		t := cloneTask(r.Task)
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

// cloneTask copies what a2a-go's task manager mutates in place: the task
// struct, its slices and metadata, and each artifact's struct and parts
// slice. Messages and parts are immutable once stored and are shared; this
// is what replaces the per-event gob deep copy.
func cloneTask(t *a2ago.Task) *a2ago.Task {
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

// statusTime is the time a task's status was recorded, or now.
func statusTime(t *a2ago.Task, now time.Time) time.Time {
	if t.Status.Timestamp != nil && !t.Status.Timestamp.IsZero() {
		return t.Status.Timestamp.UTC()
	}
	return now.UTC()
}

func validate(t *a2ago.Task) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("task id is required: %w", a2ago.ErrInvalidParams)
	}
	if t.ContextID == "" {
		return fmt.Errorf("task context id is required: %w", a2ago.ErrInvalidParams)
	}
	return nil
}
