package a2a

import (
	"fmt"
	"maps"
	"slices"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
)

// eventState is the task state ev carries: a task's or a status update's;
// ok is false for other events.
func eventState(ev a2ago.Event) (st a2ago.TaskState, ok bool) {
	switch v := ev.(type) {
	case *a2ago.Task:
		return v.Status.State, true
	case *a2ago.TaskStatusUpdateEvent:
		return v.Status.State, true
	}
	return a2ago.TaskStateUnspecified, false
}

// isFinal reports whether ev ends an execution: a terminal state or
// input-required.
func isFinal(ev a2ago.Event) bool {
	st, ok := eventState(ev)
	return ok && (st.Terminal() || st == a2ago.TaskStateInputRequired)
}

// fold returns the task after ev, sharing with cur everything ev does not
// change; cur itself is never modified.
func fold(cur *a2ago.Task, ev a2ago.Event) (*a2ago.Task, error) {
	if cur != nil && cur.Status.State.Terminal() {
		return nil, fmt.Errorf("%q task state updates are not allowed: %w", cur.Status.State, a2ago.ErrInvalidAgentResponse)
	}
	switch v := ev.(type) {
	case *a2ago.Task:
		c := *v
		return &c, nil
	case *a2ago.TaskArtifactUpdateEvent:
		if cur == nil {
			return nil, fmt.Errorf("first event must be a Task or a message: %w", a2ago.ErrInvalidAgentResponse)
		}
		if v.Artifact == nil || len(v.Artifact.Parts) == 0 {
			return nil, fmt.Errorf("artifact cannot be empty: %w", a2ago.ErrInvalidAgentResponse)
		}
		next := *cur
		art := *v.Artifact
		art.Parts = slices.Clone(art.Parts)
		art.Metadata = maps.Clone(art.Metadata)
		i := slices.IndexFunc(cur.Artifacts, func(a *a2ago.Artifact) bool { return a.ID == art.ID })
		switch {
		case i < 0 && v.Append:
			return nil, fmt.Errorf("no artifact %s to append to: %w", art.ID, a2ago.ErrInvalidAgentResponse)
		case i < 0:
			next.Artifacts = append(slices.Clip(cur.Artifacts), &art)
		case !v.Append:
			next.Artifacts = slices.Clone(cur.Artifacts)
			next.Artifacts[i] = &art
		default:
			old := *cur.Artifacts[i]
			old.Parts = append(slices.Clip(old.Parts), art.Parts...)
			if len(art.Metadata) > 0 {
				old.Metadata = maps.Clone(old.Metadata)
				if old.Metadata == nil {
					old.Metadata = map[string]any{}
				}
				maps.Copy(old.Metadata, art.Metadata)
			}
			next.Artifacts = slices.Clone(cur.Artifacts)
			next.Artifacts[i] = &old
		}
		return &next, nil
	case *a2ago.TaskStatusUpdateEvent:
		if cur == nil {
			return nil, fmt.Errorf("first event must be a Task or a message: %w", a2ago.ErrInvalidAgentResponse)
		}
		next := *cur
		if cur.Status.Message != nil {
			next.History = append(slices.Clip(cur.History), cur.Status.Message)
		}
		if v.Metadata != nil {
			next.Metadata = maps.Clone(cur.Metadata)
			if next.Metadata == nil {
				next.Metadata = map[string]any{}
			}
			maps.Copy(next.Metadata, v.Metadata)
		}
		next.Status = v.Status
		return &next, nil
	}
	return nil, fmt.Errorf("unexpected event type %T: %w", ev, a2ago.ErrInvalidAgentResponse)
}
