package a2a

import "github.com/switchboard-dev/switchboard/internal/a2astore"

// openStores builds the task and push config stores the configuration asks
// for: Store and PushStore as given, else over Bucket (the push configs
// under their own key prefix, which the task store skips), else in memory.
func (s *Server) openStores() error {
	cfg := &s.cfg
	if cfg.Bucket != nil {
		kv := a2astore.JetStreamKV(cfg.Bucket)
		if cfg.Store == nil {
			st, err := a2astore.NewKV(a2astore.KVConfig{KV: kv, Name: cfg.Bucket.Bucket(), Policy: s.policy,
				Logger: &s.log, Skip: a2astore.PushPrefix})
			if err != nil {
				return err // a *failure.Error
			}
			cfg.Store = st
		}
		if cfg.PushStore == nil {
			cfg.PushStore = a2astore.NewPushConfigs(kv)
		}
	}
	if cfg.Store == nil {
		cfg.Store = a2astore.NewMemory(a2astore.MemoryConfig{})
	}
	return nil
}
