package taskstore

import (
	"context"
	"sync"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/switchboard-dev/switchboard/internal/a2atask"
)

// MemoryConfig configures a Memory store; the zero value means defaults.
type MemoryConfig struct {
	// Owner returns the name of the user a request acts for; the store
	// scopes every task to the owner that created it, and an empty name is
	// the anonymous user of a server without authentication (nil: the user
	// the a2a server's authentication put in a2a-go's call context).
	Owner func(ctx context.Context) string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// TTL is how long a task is kept after its last write (0: 24 hours;
	// negative: forever). An expired task is not found; expired tasks are
	// swept out as new ones are created.
	TTL time.Duration
}

// memoryStore is an in-memory task store. Stored tasks are copied
// structurally on write and on read (slices and artifacts, see
// a2atask.CloneTask). It is safe for concurrent use.
type memoryStore struct {
	cfg   MemoryConfig
	mu    sync.RWMutex
	tasks map[a2ago.TaskID]*a2atask.Record
	swept time.Time // the last sweep of expired tasks
}

var _ taskstore.Store = (*memoryStore)(nil)

// NewMemory returns an empty in-memory task store (a2a-go's taskstore.Store).
func NewMemory(cfg MemoryConfig) taskstore.Store {
	if cfg.Owner == nil {
		cfg.Owner = a2atask.CallerOwner
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TTL == 0 {
		cfg.TTL = a2atask.DefaultTTL
	}
	return &memoryStore{cfg: cfg, tasks: map[a2ago.TaskID]*a2atask.Record{}, swept: cfg.Now()}
}

// expired reports whether r has outlived the TTL at now.
func (m *memoryStore) expired(r *a2atask.Record, now time.Time) bool {
	return m.cfg.TTL > 0 && now.Sub(r.Written) > m.cfg.TTL
}

// sweep drops the expired tasks, at most once per tenth of the TTL (so
// that its cost is spread over many creations). m.mu is held.
func (m *memoryStore) sweep(now time.Time) {
	if m.cfg.TTL <= 0 || now.Sub(m.swept) < m.cfg.TTL/10 {
		return
	}
	m.swept = now
	for id, r := range m.tasks {
		if m.expired(r, now) {
			delete(m.tasks, id)
		}
	}
}

// Create stores a new task.
func (m *memoryStore) Create(ctx context.Context, task *a2ago.Task) (taskstore.TaskVersion, error) {
	if err := a2atask.Validate(task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	now := m.cfg.Now()
	r := &a2atask.Record{Task: a2atask.CloneTask(task), User: m.cfg.Owner(ctx), Updated: a2atask.StatusTime(task, now), Version: 1, Written: now}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	if old, ok := m.tasks[task.ID]; ok && !m.expired(old, now) {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	m.tasks[task.ID] = r
	return 1, nil
}

// Update replaces a task if req.PrevVersion is still the latest.
func (m *memoryStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if err := a2atask.Validate(req.Task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	owner := m.cfg.Owner(ctx)
	t := a2atask.CloneTask(req.Task)
	now := m.cfg.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.tasks[t.ID]
	if !ok || old.User != owner || m.expired(old, now) {
		return taskstore.TaskVersionMissing, a2ago.ErrTaskNotFound
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && taskstore.TaskVersion(old.Version) != req.PrevVersion {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	r := &a2atask.Record{Task: t, User: old.User, Updated: a2atask.StatusTime(t, now), Version: old.Version + 1, Written: now}
	m.tasks[t.ID] = r
	return taskstore.TaskVersion(r.Version), nil
}

// Get returns a task owned by the caller, or a2a.ErrTaskNotFound (also
// for a task another user owns, so that its existence is not revealed).
func (m *memoryStore) Get(ctx context.Context, id a2ago.TaskID) (*taskstore.StoredTask, error) {
	m.mu.RLock()
	r, ok := m.tasks[id]
	m.mu.RUnlock()
	if !ok || r.User != m.cfg.Owner(ctx) || m.expired(r, m.cfg.Now()) {
		return nil, a2ago.ErrTaskNotFound
	}
	return &taskstore.StoredTask{Task: a2atask.CloneTask(r.Task), Version: taskstore.TaskVersion(r.Version), User: r.User}, nil
}

// List lists the caller's tasks, newest status first.
func (m *memoryStore) List(ctx context.Context, req *a2ago.ListTasksRequest) (*a2ago.ListTasksResponse, error) {
	p, err := a2atask.ParseList(req)
	if err != nil {
		return nil, err
	}
	now := m.cfg.Now()
	m.mu.RLock()
	recs := make([]*a2atask.Record, 0, len(m.tasks))
	for _, r := range m.tasks {
		if !m.expired(r, now) {
			recs = append(recs, r)
		}
	}
	m.mu.RUnlock()
	return a2atask.Page(recs, m.cfg.Owner(ctx), p, a2atask.Window{}), nil
}
