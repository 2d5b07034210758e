package a2astore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

// KV is the small key-value surface the KV task store needs. JetStreamKV
// adapts a NATS JetStream bucket to it; the bus package can provide its own.
// Revisions must grow on every write of a key.
type KV interface {
	// Get returns a key's value and revision, or ErrKeyNotFound.
	Get(ctx context.Context, key string) ([]byte, uint64, error)
	// Create writes a new key, or fails with ErrKeyExists.
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	// Update writes a key whose revision is still rev, or fails with
	// ErrRevisionMismatch.
	Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error)
	// Keys lists every key.
	Keys(ctx context.Context) ([]string, error)
}

// Errors a KV reports for the expected outcomes of its operations.
var (
	ErrKeyNotFound      = errors.New("store: key not found")
	ErrKeyExists        = errors.New("store: key exists")
	ErrRevisionMismatch = errors.New("store: revision mismatch")
)

// JetStreamKV adapts a JetStream key-value bucket.
func JetStreamKV(kv jetstream.KeyValue) KV { return jsKV{kv} }

type jsKV struct{ kv jetstream.KeyValue }

func (j jsKV) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	e, err := j.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, ErrKeyNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	return e.Value(), e.Revision(), nil
}

func (j jsKV) Create(ctx context.Context, key string, v []byte) (uint64, error) {
	rev, err := j.kv.Create(ctx, key, v)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, ErrKeyExists
	}
	return rev, err
}

func (j jsKV) Update(ctx context.Context, key string, v []byte, rev uint64) (uint64, error) {
	n, err := j.kv.Update(ctx, key, v, rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return 0, ErrRevisionMismatch
	}
	return n, err
}

func (j jsKV) Keys(ctx context.Context) ([]string, error) {
	keys, err := j.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	return keys, err
}

// KVConfig configures NewKV.
type KVConfig struct {
	// KV holds the tasks (required).
	KV KV
	// Name identifies the bucket in failures (default "a2a-tasks").
	Name string
	// Owner returns the name of the user a request acts for; the store
	// scopes every task to the owner that created it, and an empty name is
	// the anonymous user of a server without authentication (nil: the user
	// the a2a server's authentication put in a2a-go's call context).
	Owner func(ctx context.Context) string
	// Policy runs every KV operation (retries, circuit breaker); nil means
	// failure.NewPolicy with Logger.
	Policy failure.Policy
	// Logger receives logs (nil: none).
	Logger *zerolog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Skip is a key prefix the task store leaves alone (empty: none): List
	// ignores such keys and no task is stored or read under one, so that
	// the push configs (PushPrefix) can share the bucket.
	Skip string
}

// kvStore keeps tasks in a key-value bucket, one key per task holding its
// JSON record; the key's revision is the task's version, so that
// concurrent writers on several replicas are detected.
type kvStore struct {
	cfg KVConfig
	key failure.Key
}

var _ taskstore.Store = (*kvStore)(nil)

// NewKV returns a task store (a2a-go's taskstore.Store) over cfg.KV that
// several replicas can share.
func NewKV(cfg KVConfig) (taskstore.Store, error) {
	if cfg.KV == nil {
		return nil, failure.New(failure.Config, failure.SourceA2A, "a2astore.KVConfig.KV is required")
	}
	if cfg.Name == "" {
		cfg.Name = "a2a-tasks"
	}
	if cfg.Owner == nil {
		cfg.Owner = callerOwner
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Policy == nil {
		log := zerolog.Nop()
		if cfg.Logger != nil {
			log = *cfg.Logger
		}
		cfg.Policy = failure.NewPolicy(failure.PolicyConfig{Logger: &log})
	}
	return &kvStore{cfg: cfg, key: failure.Key{Source: failure.SourceBus, Name: cfg.Name}}, nil
}

var validKey = regexp.MustCompile(`^[-_=.a-zA-Z0-9]{1,200}$`)

// exec runs op through the policy. Expected outcomes (not found, exists,
// revision mismatch) are returned through sentinel and never count
// against the bucket's health.
func (s *kvStore) exec(ctx context.Context, op string, fn func(ctx context.Context) error) (sentinel error, err error) {
	err = s.cfg.Policy.Execute(ctx, s.key, func(ctx context.Context) error {
		e := fn(ctx)
		if errors.Is(e, ErrKeyNotFound) || errors.Is(e, ErrKeyExists) || errors.Is(e, ErrRevisionMismatch) {
			sentinel = e
			return nil
		}
		if e != nil {
			return &failure.Error{Kind: failure.KindOf(e), Source: failure.SourceBus, Name: s.cfg.Name, Op: op,
				Retryable: failure.KindOf(e) == failure.Transient || failure.KindOf(e) == failure.Timeout, Err: e}
		}
		return nil
	})
	return sentinel, err
}

// decodeRecord parses a stored task record. Records come from a shared
// bucket that other processes write, so they are treated as outside input.
func decodeRecord(b []byte) (*a2ago.Task, string, time.Time, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, "", time.Time{}, fmt.Errorf("malformed task record: %w", err)
	}
	if err := validate(r.Task); err != nil {
		return nil, "", time.Time{}, fmt.Errorf("malformed task record: %w", err)
	}
	return r.Task, r.User, r.Updated, nil
}

// taskKey tells whether key can hold a task: a valid NATS key outside the
// skipped prefix.
func (s *kvStore) taskKey(key string) bool {
	return validKey.MatchString(key) && (s.cfg.Skip == "" || !strings.HasPrefix(key, s.cfg.Skip))
}

func (s *kvStore) get(ctx context.Context, id a2ago.TaskID) (*record, error) {
	if !s.taskKey(string(id)) {
		return nil, a2ago.ErrTaskNotFound
	}
	var val []byte
	var rev uint64
	sent, err := s.exec(ctx, "get task", func(ctx context.Context) error {
		var e error
		val, rev, e = s.cfg.KV.Get(ctx, string(id))
		return e
	})
	if err != nil {
		return nil, err
	}
	if sent != nil {
		return nil, a2ago.ErrTaskNotFound
	}
	t, user, upd, err := decodeRecord(val)
	if err != nil {
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceBus, Name: s.cfg.Name, Op: "get task", Err: err}
	}
	return &record{Task: t, User: user, Updated: upd, version: int64(rev)}, nil
}

// Create stores a new task.
func (s *kvStore) Create(ctx context.Context, task *a2ago.Task) (taskstore.TaskVersion, error) {
	if err := validate(task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if !s.taskKey(string(task.ID)) {
		return taskstore.TaskVersionMissing, fmt.Errorf("task id %q cannot be stored: %w", task.ID, a2ago.ErrInvalidParams)
	}
	b, err := json.Marshal(record{Task: task, User: s.cfg.Owner(ctx), Updated: statusTime(task, s.cfg.Now())})
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	var rev uint64
	sent, err := s.exec(ctx, "create task", func(ctx context.Context) error {
		var e error
		rev, e = s.cfg.KV.Create(ctx, string(task.ID), b)
		return e
	})
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if sent != nil {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
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
	b, err := json.Marshal(record{Task: req.Task, User: old.User, Updated: statusTime(req.Task, s.cfg.Now())})
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	var rev uint64
	sent, err := s.exec(ctx, "update task", func(ctx context.Context) error {
		var e error
		rev, e = s.cfg.KV.Update(ctx, string(req.Task.ID), b, prev)
		return e
	})
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if sent != nil {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
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

// List lists the caller's tasks, newest status first. It reads every key
// of the bucket: fine for thousands of tasks, not for millions.
func (s *kvStore) List(ctx context.Context, req *a2ago.ListTasksRequest) (*a2ago.ListTasksResponse, error) {
	var keys []string
	if _, err := s.exec(ctx, "list tasks", func(ctx context.Context) error {
		var e error
		keys, e = s.cfg.KV.Keys(ctx)
		return e
	}); err != nil {
		return nil, err
	}
	owner := s.cfg.Owner(ctx)
	recs := make([]*record, 0, len(keys))
	for _, k := range keys {
		if !s.taskKey(k) {
			continue // not a task: the push configs sharing the bucket
		}
		r, err := s.get(ctx, a2ago.TaskID(k))
		if errors.Is(err, a2ago.ErrTaskNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		if r.User == owner {
			recs = append(recs, r)
		}
	}
	return list(recs, owner, req)
}
