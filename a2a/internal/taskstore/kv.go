package taskstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
)

// Defaults of KVConfig and MemoryConfig.
const (
	// DefaultTTL is how long a task is kept after its last write.
	DefaultTTL = 24 * time.Hour
	// DefaultScanCap bounds the bucket entries one List call reads.
	DefaultScanCap = 1000
)

// KVConfig configures NewKV and NewPushConfigs.
type KVConfig struct {
	// KV is the JetStream key-value bucket that holds the tasks (required).
	KV jetstream.KeyValue
	// Name identifies the bucket in failures (default "a2a-tasks").
	Name string
	// Owner returns the name of the user a request acts for; the store
	// scopes every task to the owner that created it, and an empty name is
	// the anonymous user of a server without authentication (nil: the user
	// the a2a server's authentication put in a2a-go's call context).
	Owner func(ctx context.Context) string
	// Policy runs every bucket operation (retries, circuit breaker); nil
	// means failure.Default, asked at each use.
	Policy failure.Policy
	// Logger receives logs (nil: none).
	Logger *zerolog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Skip is a key prefix the task store leaves alone (empty: none): List
	// ignores such keys and no task is stored or read under one, so that
	// the push configs (PushPrefix) can share the bucket.
	Skip string
	// TTL is how long a task is kept after its last write (0: DefaultTTL;
	// negative: forever). An expired task is not found, and is deleted
	// from the bucket when a read or a List scan meets it.
	TTL time.Duration
	// ScanCap bounds the bucket entries one List call reads (0:
	// DefaultScanCap); a bigger bucket is listed in windows of that many
	// entries, each page token resuming the scan where its window began or
	// ended.
	ScanCap int
}

// withDefaults fills the zero fields of cfg.
func (cfg KVConfig) withDefaults() KVConfig {
	if cfg.Name == "" {
		cfg.Name = "a2a-tasks"
	}
	if cfg.Owner == nil {
		cfg.Owner = callerOwner
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		l := zerolog.Nop()
		cfg.Logger = &l
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.ScanCap <= 0 {
		cfg.ScanCap = DefaultScanCap
	}
	return cfg
}

// kvStore keeps tasks in a key-value bucket, one key per task holding its
// JSON record; the key's revision is the task's version, so that
// concurrent writers on several replicas are detected.
type kvStore struct {
	cfg     KVConfig
	b       *bucket
	history atomic.Int64 // the bucket's history depth (0: not read yet)
}

var _ taskstore.Store = (*kvStore)(nil)

// NewKV returns a task store (a2a-go's taskstore.Store) over cfg.KV that
// several replicas can share.
func NewKV(cfg KVConfig) (taskstore.Store, error) {
	if cfg.KV == nil {
		return nil, failure.New(failure.Config, failure.SourceA2A, "taskstore.KVConfig.KV is required")
	}
	cfg = cfg.withDefaults()
	return &kvStore{cfg: cfg, b: newBucket(cfg.KV, cfg.Name, cfg.Policy)}, nil
}

var validKey = regexp.MustCompile(`^[-_=.a-zA-Z0-9]{1,200}$`)

// decodeRecord parses a stored task record. Records come from a shared
// bucket that other processes write, so they are treated as outside input.
func decodeRecord(b []byte) (*record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("malformed task record: %w", err)
	}
	if err := validate(r.Task); err != nil {
		return nil, fmt.Errorf("malformed task record: %w", err)
	}
	return &r, nil
}

// taskKey tells whether key can hold a task: a valid NATS key outside the
// skipped prefix.
func (s *kvStore) taskKey(key string) bool {
	return validKey.MatchString(key) && (s.cfg.Skip == "" || !strings.HasPrefix(key, s.cfg.Skip))
}

// expired reports whether a record written at written has outlived the TTL.
func (s *kvStore) expired(written time.Time) bool {
	return s.cfg.TTL > 0 && s.cfg.Now().Sub(written) > s.cfg.TTL
}

// forget deletes an expired task's key, unless it was written again
// since, and then the task's push configs when they share the bucket.
func (s *kvStore) forget(ctx context.Context, key string, rev uint64) {
	err := s.b.remove(ctx, "delete expired task", key, rev)
	if err == nil && s.cfg.Skip == PushPrefix {
		var e jetstream.KeyValueEntry
		if e, err = s.b.get(ctx, "get push configs", PushPrefix+key); err == nil {
			err = s.b.remove(ctx, "delete expired push configs", PushPrefix+key, e.Revision())
		}
	}
	if err != nil && !errors.Is(err, errRevisionMismatch) && !errors.Is(err, errKeyNotFound) {
		s.cfg.Logger.Warn().Err(err).Str("task", key).Msg("taskstore: could not delete an expired task")
	}
}

// entryRecord decodes a bucket entry into a record (an error: malformed).
func entryRecord(e jetstream.KeyValueEntry) (*record, error) {
	r, err := decodeRecord(e.Value())
	if err != nil {
		return nil, err
	}
	r.version = int64(e.Revision())
	if r.Written.IsZero() {
		r.Written = e.Created()
	}
	return r, nil
}

func (s *kvStore) get(ctx context.Context, id a2ago.TaskID) (*record, error) {
	if !s.taskKey(string(id)) {
		return nil, a2ago.ErrTaskNotFound
	}
	e, err := s.b.get(ctx, "get task", string(id))
	if errors.Is(err, errKeyNotFound) {
		return nil, a2ago.ErrTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	r, err := entryRecord(e)
	if err != nil {
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceBus, Name: s.cfg.Name, Op: "get task", Err: err}
	}
	if s.expired(r.Written) {
		s.forget(ctx, string(id), e.Revision())
		return nil, a2ago.ErrTaskNotFound
	}
	return r, nil
}

// Create stores a new task.
func (s *kvStore) Create(ctx context.Context, task *a2ago.Task) (taskstore.TaskVersion, error) {
	if err := validate(task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if !s.taskKey(string(task.ID)) {
		return taskstore.TaskVersionMissing, fmt.Errorf("task id %q cannot be stored: %w", task.ID, a2ago.ErrInvalidParams)
	}
	now := s.cfg.Now()
	b, err := json.Marshal(record{Task: task, User: s.cfg.Owner(ctx), Updated: statusTime(task, now), Written: now.UTC()})
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	rev, err := s.b.create(ctx, "create task", string(task.ID), b)
	if errors.Is(err, errKeyExists) {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	return taskstore.TaskVersion(rev), nil
}

// Update replaces a task if req.PrevVersion is still its revision.
func (s *kvStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if err := validate(req.Task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	old, err := s.get(ctx, req.Task.ID)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if old.User != s.cfg.Owner(ctx) {
		return taskstore.TaskVersionMissing, a2ago.ErrTaskNotFound
	}
	prev := uint64(old.version)
	if req.PrevVersion != taskstore.TaskVersionMissing {
		if int64(req.PrevVersion) != old.version {
			return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
		}
		prev = uint64(req.PrevVersion)
	}
	now := s.cfg.Now()
	b, err := json.Marshal(record{Task: req.Task, User: old.User, Updated: statusTime(req.Task, now), Written: now.UTC()})
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	rev, err := s.b.update(ctx, "update task", string(req.Task.ID), b, prev)
	if errors.Is(err, errRevisionMismatch) {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	return taskstore.TaskVersion(rev), nil
}

// Get returns a task owned by the caller, or a2a.ErrTaskNotFound.
func (s *kvStore) Get(ctx context.Context, id a2ago.TaskID) (*taskstore.StoredTask, error) {
	r, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.User != s.cfg.Owner(ctx) {
		return nil, a2ago.ErrTaskNotFound
	}
	return &taskstore.StoredTask{Task: r.Task, Version: taskstore.TaskVersion(r.version), User: r.User}, nil
}

// List lists the caller's tasks, newest status first. One call reads at
// most ScanCap entries of the bucket (see scan): a bucket that holds no
// more is listed exactly, sorted across pages; a bigger one window by
// window, each window sorted.
func (s *kvStore) List(ctx context.Context, req *a2ago.ListTasksRequest) (*a2ago.ListTasksResponse, error) {
	p, err := parseList(req)
	if err != nil {
		return nil, err
	}
	recs, next, err := s.scan(ctx, p.cur.Window)
	if err != nil {
		return nil, err
	}
	return page(recs, s.cfg.Owner(ctx), p, window{start: p.cur.Window, next: next}), nil
}
