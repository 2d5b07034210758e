// Package taskstore holds the a2a server's default task store: an
// in-memory store that shares immutable task data instead of deep-copying
// every event with encoding/gob (as a2a-go's default store does). The
// JetStream one, with which several replicas answer for the same tasks and
// tasks survive a restart, is bus/store's OpenTasks.
//
// Both implement a2a-go's taskstore.Store with optimistic concurrency
// (versions), owner scoping (a task is visible only to the user who created
// it; another user gets "task not found") and ListTasks with cursor
// pagination sorted by status time, newest first (internal/a2atask).
package taskstore
