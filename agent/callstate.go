package agent

import "sync"

// callState is what a running call shares with the goroutines that report
// its progress or forward its nested events: where they go, and whether
// the call has returned. One per call, so that reporting needs no closures.
type callState struct {
	r    *run
	turn int
	i    int
	info *CallInfo
	// direct: the single call of a turn of a detached run, whose reports
	// are published to the sink by the reporting goroutine (nobody
	// iterates the run's events, and the run's goroutine only waits).
	direct bool
	// ch receives reports: live (a call on the run's goroutine, which
	// emits them while it waits) or the batch's channel.
	ch   chan callMsg
	live chan callMsg
	// closing unblocks a sender waiting to forward once the call returned.
	closing chan struct{}
	// guards are the verdicts of the call's guards, reported with its
	// result (written by the call's goroutine only).
	guards []GuardInfo

	mu       sync.Mutex
	finished bool
	// ext, for a call made outside a run (BindCall), receives the reports
	// instead.
	ext *CallBinding
}

func newCallState(r *run, turn int, j callJob, msgs chan callMsg, inline bool) *callState {
	cs := &callState{r: r, turn: turn, i: j.i, info: j.info, ch: msgs,
		direct: inline && r.detached}
	if !cs.direct {
		cs.closing = make(chan struct{})
	}
	if inline && !cs.direct {
		cs.live = make(chan callMsg, 64)
		cs.ch = cs.live
	}
	return cs
}

// send delivers a report; progress (block false) is dropped rather than
// blocking a tool on a slow consumer. Reports sent after the call returned
// (by a goroutine the tool left behind) are dropped: the batch's channel
// may be closed by then.
func (cs *callState) send(m callMsg, block bool) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.finished {
		return false
	}
	if cs.ext != nil {
		return cs.sendExternal(m)
	}
	if cs.direct {
		// The run's goroutine waits for the call and nobody iterates:
		// publish to the sink from here, under mu.
		cs.r.publishCallMsg(cs.turn, cs.info, m)
		return true
	}
	if block {
		select {
		case cs.ch <- m:
			return true
		case <-cs.closing:
			return false
		}
	}
	select {
	case cs.ch <- m:
		return true
	default:
		return false
	}
}

func (cs *callState) progress(p Progress) { cs.send(callMsg{i: cs.i, progress: &p}, false) }

func (cs *callState) forward(ev Event) bool { return cs.send(callMsg{i: cs.i, nested: &ev}, true) }

// emitLive emits a report on the run's goroutine.
func (cs *callState) emitLive(m callMsg) { cs.r.emitCallMsg(cs.turn, cs.info, m) }

// done marks the call returned and emits the reports still queued.
func (cs *callState) done() {
	if cs.closing != nil {
		close(cs.closing)
	}
	cs.mu.Lock()
	cs.finished = true
	cs.mu.Unlock()
	for cs.live != nil {
		select {
		case m := <-cs.live:
			cs.emitLive(m)
		default:
			return
		}
	}
}
