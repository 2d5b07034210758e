package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/switchboard-dev/switchboard/failure"
)

// pushConfigs keeps A2A push notification configs in a key-value bucket,
// one key per task holding that task's configs as JSON, so that every
// replica of a server sees the configs a client set on any of them (and
// they survive a restart). It implements a2a-go's push.ConfigStore. Its
// keys start with pushPrefix, so it can share the task store's bucket when
// that store skips the prefix (tasksConfig.Skip), as OpenTasks does.
//
// Writes are revision-checked: concurrent writers of one task's configs
// retry on a conflict instead of losing each other's configs. Every bucket
// operation runs through the failure policy, as the task store's do.
type pushConfigs struct {
	b *taskBucket
}

var _ push.ConfigStore = (*pushConfigs)(nil)

// newPushConfigs returns a push config store (a2a-go's push.ConfigStore)
// over cfg.KV, with cfg's Name, Policy and Logger (the other fields are
// the task store's).
func newPushConfigs(cfg tasksConfig) (push.ConfigStore, error) {
	if cfg.KV == nil {
		return nil, failure.New(failure.Config, failure.SourceA2A, "the push config store needs a bucket")
	}
	cfg = cfg.withDefaults()
	return &pushConfigs{b: newTaskBucket(cfg.KV, cfg.Name, cfg.Policy)}, nil
}

// maxWriteTries bounds the read-modify-write attempts of one change under
// contention.
const maxWriteTries = 16

// Save stores config for the task (a copy; a config without an ID gets
// one), replacing a config with the same ID.
func (p *pushConfigs) Save(ctx context.Context, taskID a2ago.TaskID, config *a2ago.PushConfig) (*a2ago.PushConfig, error) {
	if config == nil || config.URL == "" {
		return nil, fmt.Errorf("%w: a push config needs an endpoint URL", a2ago.ErrInvalidParams)
	}
	if _, err := url.ParseRequestURI(config.URL); err != nil {
		return nil, fmt.Errorf("%w: invalid push config endpoint URL: %w", a2ago.ErrInvalidParams, err)
	}
	if !validKey.MatchString(string(taskID)) {
		return nil, fmt.Errorf("%w: task id %q cannot name a key", a2ago.ErrInvalidParams, taskID)
	}
	saved := *config
	if saved.ID == "" {
		saved.ID = strings.ToLower(rand.Text())
	}
	saved.TaskID = taskID
	err := p.change(ctx, taskID, func(m map[string]*a2ago.PushConfig) bool {
		c := saved
		m[c.ID] = &c
		return true
	})
	if err != nil {
		return nil, err
	}
	return &saved, nil
}

// Get returns a copy of the task's config with configID, or
// push.ErrPushConfigNotFound.
func (p *pushConfigs) Get(ctx context.Context, taskID a2ago.TaskID, configID string) (*a2ago.PushConfig, error) {
	m, _, err := p.read(ctx, taskID)
	if err != nil {
		return nil, err
	}
	c, ok := m[configID]
	if !ok {
		return nil, push.ErrPushConfigNotFound
	}
	return c, nil
}

// List returns the task's configs, by ID.
func (p *pushConfigs) List(ctx context.Context, taskID a2ago.TaskID) ([]*a2ago.PushConfig, error) {
	m, _, err := p.read(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := make([]*a2ago.PushConfig, 0, len(m))
	for _, c := range m {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *a2ago.PushConfig) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Delete removes the task's config with configID (nothing if absent).
func (p *pushConfigs) Delete(ctx context.Context, taskID a2ago.TaskID, configID string) error {
	return p.change(ctx, taskID, func(m map[string]*a2ago.PushConfig) bool {
		if _, ok := m[configID]; !ok {
			return false
		}
		delete(m, configID)
		return true
	})
}

// DeleteAll removes every config of the task.
func (p *pushConfigs) DeleteAll(ctx context.Context, taskID a2ago.TaskID) error {
	return p.change(ctx, taskID, func(m map[string]*a2ago.PushConfig) bool {
		if len(m) == 0 {
			return false
		}
		clear(m)
		return true
	})
}

// read returns the task's configs and their key's revision (0: no key).
// The value comes from a shared bucket, so it is treated as outside input.
func (p *pushConfigs) read(ctx context.Context, taskID a2ago.TaskID) (map[string]*a2ago.PushConfig, uint64, error) {
	m := map[string]*a2ago.PushConfig{}
	if !validKey.MatchString(string(taskID)) {
		return m, 0, nil
	}
	e, err := p.b.get(ctx, "get push configs", pushKey(taskID))
	if errors.Is(err, errKeyNotFound) {
		return m, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	m, err = decodePushConfigs(e.Value())
	if err != nil {
		return nil, 0, &failure.Error{Kind: failure.Protocol, Source: failure.SourceBus, Name: p.b.name, Op: "get push configs", Err: err}
	}
	return m, e.Revision(), nil
}

// change applies f to the task's configs and writes them back if f says
// they changed, retrying when another writer got there first.
func (p *pushConfigs) change(ctx context.Context, taskID a2ago.TaskID, f func(map[string]*a2ago.PushConfig) bool) error {
	if !validKey.MatchString(string(taskID)) {
		return nil
	}
	for range maxWriteTries {
		m, rev, err := p.read(ctx, taskID)
		if err != nil {
			return err
		}
		if !f(m) {
			return nil
		}
		val, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = p.b.create(ctx, "save push configs", pushKey(taskID), val)
		} else {
			_, err = p.b.update(ctx, "save push configs", pushKey(taskID), val, rev)
		}
		if errors.Is(err, errKeyExists) || errors.Is(err, errRevisionMismatch) {
			continue
		}
		return err
	}
	return &failure.Error{Kind: failure.Transient, Source: failure.SourceBus, Name: p.b.name, Op: "save push configs",
		Message: fmt.Sprintf("push configs of task %s: %d concurrent writers kept conflicting", taskID, maxWriteTries), Err: errRevisionMismatch}
}

func pushKey(taskID a2ago.TaskID) string { return pushPrefix + string(taskID) }

// pushPrefix starts the key of every push config record.
const pushPrefix = "push."

// decodePushConfigs parses a stored task's push configs (a JSON object of
// configs by ID), refusing configs without an ID or an endpoint.
func decodePushConfigs(b []byte) (map[string]*a2ago.PushConfig, error) {
	var m map[string]*a2ago.PushConfig
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("malformed push configs: %w", err)
	}
	if m == nil {
		m = map[string]*a2ago.PushConfig{}
	}
	for id, c := range m {
		if c == nil || c.ID != id || c.URL == "" {
			return nil, fmt.Errorf("malformed push configs: entry %q has no matching id or no endpoint", id)
		}
	}
	return m, nil
}
