package store

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
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/a2atask"
)

// Defaults of TasksConfig.
const (
	// defaultTasksTTL is how long a task is kept after its last write.
	defaultTasksTTL = 24 * time.Hour
	// defaultScanCap bounds the bucket entries one List call reads.
	defaultScanCap = 1000
)

// TasksConfig configures [OpenTasks]. The zero value means the defaults
// shown.
type TasksConfig struct {
	// Name is the KV bucket that keeps the tasks and their push
	// notification configs (default "a2a-tasks"; one bucket per served
	// agent). An existing bucket is used as it is.
	Name string
	// Replicas is the number of copies of a new bucket in a cluster
	// (default 1).
	Replicas int
	// TTL is how long a task is kept after its last write (default 24
	// hours; negative: forever); then the task is not found, and is
	// deleted from the bucket when a read or a ListTasks scan meets it.
	TTL time.Duration
	// ScanCap bounds the bucket entries one ListTasks call reads (default
	// 1,000); a bigger bucket is listed in windows of that many entries,
	// each page token resuming the scan where its window began or ended.
	ScanCap int
	// Owner returns the name of the user a request acts for; the store
	// scopes every task to the owner that created it, and an empty name is
	// the anonymous user of a server without authentication (nil: the user
	// the a2a server's authentication put in a2a-go's call context).
	Owner func(ctx context.Context) string
	// Logger receives the store's logs (nil: none).
	Logger *zerolog.Logger
	// Policy runs every bucket operation (retries, a circuit per bucket)
	// and handles its failures (nil: failure.Default, asked at each use).
	Policy failure.Policy
}

// Tasks are an A2A server's task store and push config store in one
// JetStream bucket, so that several replicas of the server answer for the
// same tasks and tasks survive a restart: give them to a2a.ServerConfig's
// Store and PushStore.
type Tasks struct {
	// Store keeps the tasks (a2a-go's taskstore.Store).
	Store taskstore.Store
	// PushConfigs keeps the push notification configs, under their own
	// key prefix in the same bucket (a2a-go's push.ConfigStore).
	PushConfigs push.ConfigStore
}

// OpenTasks opens (creating it if needed) the bucket of an A2A server's
// tasks on the bus's JetStream. Every bucket operation runs through the
// bus's failure policy (one circuit for the bucket, keyed by its name).
func OpenTasks(ctx context.Context, b *bus.Bus, cfg TasksConfig) (*Tasks, error) {
	if b == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "store.OpenTasks needs a bus")
	}
	c := connOf(b, cfg.Policy, cfg.Logger)
	if cfg.Name == "" {
		cfg.Name = "a2a-tasks"
	}
	var kv jetstream.KeyValue
	err := c.jetStreamAdmin(ctx, failure.Key{Source: failure.SourceBus, Name: "jetstream"}, "open tasks", func(ctx context.Context) error {
		var err error
		kv, err = c.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: cfg.Name,
			Description: "Switchboard A2A tasks and push notification configs", Replicas: max(cfg.Replicas, 1)})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = c.js.KeyValue(ctx, cfg.Name)
		}
		return err
	})
	if err != nil {
		return nil, c.wrap(err, "open tasks", "the A2A task bucket "+cfg.Name+" could not be opened")
	}
	tc := tasksConfig{KV: kv, Name: cfg.Name, Owner: cfg.Owner, Policy: c.policy, Logger: &c.log, TTL: cfg.TTL, ScanCap: cfg.ScanCap}
	pc, err := newPushConfigs(tc)
	if err != nil {
		return nil, err
	}
	tc.Skip = pushPrefix
	st, err := newTasks(tc)
	if err != nil {
		return nil, err
	}
	return &Tasks{Store: st, PushConfigs: pc}, nil
}

// tasksConfig configures newTasks and newPushConfigs.
type tasksConfig struct {
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
	// the push configs (pushPrefix) can share the bucket.
	Skip string
	// TTL is how long a task is kept after its last write (0: 24 hours;
	// negative: forever). An expired task is not found, and is deleted
	// from the bucket when a read or a List scan meets it.
	TTL time.Duration
	// ScanCap bounds the bucket entries one List call reads (0:
	// 1,000); a bigger bucket is listed in windows of that many
	// entries, each page token resuming the scan where its window began or
	// ended.
	ScanCap int
}

// withDefaults fills the zero fields of cfg.
func (cfg tasksConfig) withDefaults() tasksConfig {
	if cfg.Name == "" {
		cfg.Name = "a2a-tasks"
	}
	if cfg.Owner == nil {
		cfg.Owner = a2atask.CallerOwner
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		l := zerolog.Nop()
		cfg.Logger = &l
	}
	if cfg.TTL == 0 {
		cfg.TTL = defaultTasksTTL
	}
	if cfg.ScanCap <= 0 {
		cfg.ScanCap = defaultScanCap
	}
	return cfg
}

// kvStore keeps tasks in a key-value bucket, one key per task holding its
// JSON record; the key's revision is the task's version, so that
// concurrent writers on several replicas are detected.
type kvStore struct {
	cfg     tasksConfig
	b       *taskBucket
	history atomic.Int64 // the bucket's history depth (0: not read yet)
}

var _ taskstore.Store = (*kvStore)(nil)

// newTasks returns a task store (a2a-go's taskstore.Store) over cfg.KV that
// several replicas can share.
func newTasks(cfg tasksConfig) (taskstore.Store, error) {
	if cfg.KV == nil {
		return nil, failure.New(failure.Config, failure.SourceA2A, "the task store needs a bucket")
	}
	cfg = cfg.withDefaults()
	return &kvStore{cfg: cfg, b: newTaskBucket(cfg.KV, cfg.Name, cfg.Policy)}, nil
}

var validKey = regexp.MustCompile(`^[-_=.a-zA-Z0-9]{1,200}$`)

// decodeRecord parses a stored task record. Records come from a shared
// bucket that other processes write, so they are treated as outside input.
func decodeRecord(b []byte) (*a2atask.Record, error) {
	var r a2atask.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("malformed task record: %w", err)
	}
	if err := a2atask.Validate(r.Task); err != nil {
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
	if err == nil && s.cfg.Skip == pushPrefix {
		var e jetstream.KeyValueEntry
		if e, err = s.b.get(ctx, "get push configs", pushPrefix+key); err == nil {
			err = s.b.remove(ctx, "delete expired push configs", pushPrefix+key, e.Revision())
		}
	}
	if err != nil && !errors.Is(err, errRevisionMismatch) && !errors.Is(err, errKeyNotFound) {
		s.cfg.Logger.Warn().Err(err).Str("task", key).Msg("taskstore: could not delete an expired task")
	}
}

// entryRecord decodes a bucket entry into a record (an error: malformed).
func entryRecord(e jetstream.KeyValueEntry) (*a2atask.Record, error) {
	r, err := decodeRecord(e.Value())
	if err != nil {
		return nil, err
	}
	r.Version = int64(e.Revision())
	if r.Written.IsZero() {
		r.Written = e.Created()
	}
	return r, nil
}

func (s *kvStore) get(ctx context.Context, id a2ago.TaskID) (*a2atask.Record, error) {
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
	if err := a2atask.Validate(task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if !s.taskKey(string(task.ID)) {
		return taskstore.TaskVersionMissing, fmt.Errorf("task id %q cannot be stored: %w", task.ID, a2ago.ErrInvalidParams)
	}
	now := s.cfg.Now()
	b, err := json.Marshal(a2atask.Record{Task: task, User: s.cfg.Owner(ctx), Updated: a2atask.StatusTime(task, now), Written: now.UTC()})
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
	if err := a2atask.Validate(req.Task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	old, err := s.get(ctx, req.Task.ID)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if old.User != s.cfg.Owner(ctx) {
		return taskstore.TaskVersionMissing, a2ago.ErrTaskNotFound
	}
	prev := uint64(old.Version)
	if req.PrevVersion != taskstore.TaskVersionMissing {
		if int64(req.PrevVersion) != old.Version {
			return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
		}
		prev = uint64(req.PrevVersion)
	}
	now := s.cfg.Now()
	b, err := json.Marshal(a2atask.Record{Task: req.Task, User: old.User, Updated: a2atask.StatusTime(req.Task, now), Written: now.UTC()})
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
	return &taskstore.StoredTask{Task: r.Task, Version: taskstore.TaskVersion(r.Version), User: r.User}, nil
}

// List lists the caller's tasks, newest status first. One call reads at
// most ScanCap entries of the bucket (see scan): a bucket that holds no
// more is listed exactly, sorted across pages; a bigger one window by
// window, each window sorted.
func (s *kvStore) List(ctx context.Context, req *a2ago.ListTasksRequest) (*a2ago.ListTasksResponse, error) {
	p, err := a2atask.ParseList(req)
	if err != nil {
		return nil, err
	}
	recs, next, err := s.scan(ctx, p.From())
	if err != nil {
		return nil, err
	}
	return a2atask.Page(recs, s.cfg.Owner(ctx), p, a2atask.Window{Start: p.From(), Next: next}), nil
}
