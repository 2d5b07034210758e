package bus

import (
	"strings"

	"github.com/switchboard-dev/switchboard/bus/internal/wire"
)

// subjects is the subject scheme under one prefix. Its methods sanitize the
// tokens they are given (Token), so that a run or task id can never add
// subject levels or wildcards.
type subjects struct {
	prefix   string
	events   string // "<prefix>.events."
	progress string // "<prefix>.progress."
	sampling string // "<prefix>.sampling"
	elicit   string // "<prefix>.elicit."
	done     string // "<prefix>.elicit.done."
	tasks    string // "<prefix>.a2a.tasks."
	failures string // "<prefix>.failures"
}

// newSubjects returns the scheme under prefix (default "switchboard"). The
// prefix may have several levels ("acme.prod"); each level is sanitized.
func newSubjects(prefix string) subjects {
	if prefix == "" {
		prefix = "switchboard"
	}
	parts := strings.Split(prefix, ".")
	for i, p := range parts {
		parts[i] = wire.Token(p)
	}
	p := strings.Join(parts, ".")
	return subjects{
		prefix:   p,
		events:   p + ".events.",
		progress: p + ".progress.",
		sampling: p + ".sampling",
		elicit:   p + ".elicit.",
		done:     p + ".elicit.done.",
		tasks:    p + ".a2a.tasks.",
		failures: p + ".failures",
	}
}

// Prefix is the sanitized prefix.
func (s subjects) Prefix() string { return s.prefix }

// Events is the subject of a run's events: <prefix>.events.<run>.
func (s subjects) Events(run string) string { return s.events + wire.Token(run) }

// Progress is the subject of a run's progress: <prefix>.progress.<run>.
func (s subjects) Progress(run string) string { return s.progress + wire.Token(run) }

// Sampling is the sampling request subject: <prefix>.sampling.
func (s subjects) Sampling() string { return s.sampling }

// Elicit is the subject of a run's questions: <prefix>.elicit.<run>.
func (s subjects) Elicit(run string) string { return s.elicit + wire.Token(run) }

// ElicitDone is the subject on which the end of a run's URL-mode
// elicitation is announced (publish).
func (s subjects) ElicitDone(run string) string { return s.done + wire.Token(run) }

// Failures is the subject of handled failures: <prefix>.failures.
func (s subjects) Failures() string { return s.failures }

// Task is the subject of an A2A task's updates: <prefix>.a2a.tasks.<task>.
func (s subjects) Task(task string) string { return s.tasks + wire.Token(task) }
