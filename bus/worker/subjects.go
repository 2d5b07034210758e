package worker

import (
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
)

// subjects is the subject scheme of one pool name under the bus's prefix.
// Every subject of a pool is under <prefix>.work.<name>, so NATS
// permissions can be granted per pool.
type subjects struct {
	start string // <prefix>.work.<name>: start requests (queue group)
	info  string // <prefix>.work.<name>.info: every worker answers
	job   string // <prefix>.work.<name>.job.
	alive string // <prefix>.work.<name>.alive: durable workers' heartbeats
}

func newSubjects(b *bus.Bus, name string) subjects {
	base := b.Prefix() + ".work." + wire.Token(name)
	return subjects{start: base, info: base + ".info", job: base + ".job.", alive: base + ".alive"}
}

// out carries a job's events and heartbeats, worker to pool.
func (s subjects) out(job string) string { return s.job + wire.Token(job) + ".out" }

// ctl carries a job's pings and cancellation, pool to worker.
func (s subjects) ctl(job string) string { return s.job + wire.Token(job) + ".ctl" }

// elicit carries a job's questions, worker to pool (request-reply).
func (s subjects) elicit(job string) string { return s.job + wire.Token(job) + ".elicit" }
