package a2a

import "github.com/switchboard-dev/switchboard/a2a/internal/taskstore"

// openStores builds the task and push config stores the configuration asks
// for: Store and PushStore as given, else over Bucket (the push configs
// under their own key prefix, which the task store skips; both through the
// server's policy), else in memory. Tasks in either kept store live
// TaskTTL after their last write.
func (s *Server) openStores() error {
	cfg := &s.cfg
	if cfg.Bucket != nil {
		kc := taskstore.KVConfig{KV: cfg.Bucket, Name: cfg.Bucket.Bucket(), Policy: s.cfg.Policy, Logger: &s.log,
			Skip: taskstore.PushPrefix, TTL: cfg.TaskTTL}
		if cfg.Store == nil {
			st, err := taskstore.NewKV(kc)
			if err != nil {
				return err // a *failure.Error
			}
			cfg.Store = st
		}
		if cfg.PushStore == nil {
			ps, err := taskstore.NewPushConfigs(kc)
			if err != nil {
				return err
			}
			cfg.PushStore = ps
		}
	}
	if cfg.Store == nil {
		cfg.Store = taskstore.NewMemory(taskstore.MemoryConfig{TTL: cfg.TaskTTL})
	}
	return nil
}
