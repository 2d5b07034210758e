// Package taskstore holds A2A task stores for the a2a server: an in-memory
// store that shares immutable task data instead of deep-copying every event
// with encoding/gob (as a2a-go's default store does), and a NATS JetStream
// key-value store with which several replicas answer for the same tasks and
// tasks survive a restart.
//
// Both implement a2a-go's taskstore.Store with optimistic concurrency
// (versions), owner scoping (a task is visible only to the user who created
// it; another user gets "task not found") and ListTasks with cursor
// pagination sorted by status time, newest first.
package taskstore
