package a2astore

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
)

// pushConfigs keeps A2A push notification configs in a key-value bucket,
// one key per task holding that task's configs as JSON, so that every
// replica of a server sees the configs a client set on any of them (and
// they survive a restart). It implements a2a-go's push.ConfigStore. Its
// keys start with PushPrefix, so it can share the task store's bucket when
// that store skips the prefix (KVConfig.Skip), as a2a.ServerConfig.Bucket does.
//
// Writes are revision-checked: concurrent writers of one task's configs
// retry on a conflict instead of losing each other's configs.
type pushConfigs struct {
	kv KV
}

var _ push.ConfigStore = (*pushConfigs)(nil)

// NewPushConfigs returns a push config store (a2a-go's push.ConfigStore)
// over kv (JetStreamKV, or any KV).
func NewPushConfigs(kv KV) push.ConfigStore { return &pushConfigs{kv: kv} }

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
	val, rev, err := p.kv.Get(ctx, pushKey(taskID))
	if errors.Is(err, ErrKeyNotFound) {
		return m, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	m, err = decodePushConfigs(val)
	return m, rev, err
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
			_, err = p.kv.Create(ctx, pushKey(taskID), val)
		} else {
			_, err = p.kv.Update(ctx, pushKey(taskID), val, rev)
		}
		if errors.Is(err, ErrKeyExists) || errors.Is(err, ErrRevisionMismatch) {
			continue
		}
		return err
	}
	return fmt.Errorf("push configs of task %s: %d concurrent writers kept conflicting: %w", taskID, maxWriteTries, ErrRevisionMismatch)
}

func pushKey(taskID a2ago.TaskID) string { return PushPrefix + string(taskID) }

// PushPrefix starts the key of every push config record.
const PushPrefix = "push."

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
