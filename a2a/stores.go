package a2a

import "github.com/switchboard-dev/switchboard/a2a/internal/taskstore"

// openStores builds the task store the configuration asks for: Store as
// given, else in memory (tasks live TaskTTL after their last write).
func (s *Server) openStores() error {
	cfg := &s.cfg
	if cfg.Store == nil {
		cfg.Store = taskstore.NewMemory(taskstore.MemoryConfig{TTL: cfg.TaskTTL})
	}
	return nil
}
