package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// The index of runs lives in JetStream, not in the console's memory, so
// that a page of the runs list costs the same with ten runs stored as with
// thousands, and every console on the bus shares it: the stream
// <STREAM>_CONSOLE_RUNS keeps one record per top-level run on
// <prefix>.console.runs.<run> (one message per subject), written once when
// a console first sees the run's run_started event. A page reads its
// records by sequence, newest first, and each run's state from the last
// event of its events subject. The stream <STREAM>_CONSOLE keeps how far
// the index has read the events stream (<prefix>.console.cursor) and the
// record of each answer (<prefix>.console.answers.<run>.<question>).

// RunSummary is one run in the runs list.
type RunSummary struct {
	// ID, Agent and Input (cut, redacted) describe the run; Started is its
	// run_started event's time.
	ID      string    `json:"id"`
	Agent   string    `json:"agent,omitempty"`
	Input   string    `json:"input,omitempty"`
	Started time.Time `json:"started"`
	// ForkOf is the run this one re-runs from its turn ForkTurn.
	ForkOf   string `json:"fork_of,omitempty"`
	ForkTurn int    `json:"fork_turn,omitempty"`
	// State is running, done, failed or parked, from the run's last event
	// (Updated); Turn, Tokens and CostUSD its counters when it ended.
	State   string    `json:"state,omitempty"`
	Updated time.Time `json:"updated,omitzero"`
	Turn    int       `json:"turn,omitempty"`
	Tokens  int       `json:"tokens,omitempty"`
	CostUSD float64   `json:"cost_usd,omitempty"`
	Error   string    `json:"error,omitempty"`
	// Seq is the record's place in the index (a page's cursor).
	Seq uint64 `json:"seq"`
}

// maxInput is the most of a run's input the runs list shows.
const maxInput = 300

type index struct {
	b   *bus.Bus
	hub *hub
	log *zerolog.Logger

	runsStream, auditStream string
	runsSubj, cursorSubj    string
	answersSubj, eventsSubj string

	mu        sync.Mutex
	runs      jetstream.Stream
	audit     jetstream.Stream
	events    jetstream.Stream
	caughtUp  chan struct{} // closed when the index has read the events stored at its start
	caughtOne sync.Once
}

func newIndex(b *bus.Bus, h *hub, log *zerolog.Logger) *index {
	p := b.Prefix()
	return &index{b: b, hub: h, log: log,
		runsStream: b.StreamName() + "_CONSOLE_RUNS", auditStream: b.StreamName() + "_CONSOLE",
		runsSubj: p + ".console.runs.", cursorSubj: p + ".console.cursor", answersSubj: p + ".console.answers.",
		eventsSubj: p + ".events.", caughtUp: make(chan struct{})}
}

// ensure creates (or updates) the console's streams.
func (ix *index) ensure(ctx context.Context) error {
	js := ix.b.JetStream()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	runs, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: ix.runsStream, Description: "Switchboard console: the index of runs",
		Subjects: []string{ix.runsSubj + ">"}, MaxMsgsPerSubject: 1, AllowDirect: true,
		MaxAge: 7 * 24 * time.Hour, MaxBytes: 256 << 20, Discard: jetstream.DiscardOld, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return ix.b.Classify(err, "console index")
	}
	audit, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: ix.auditStream, Description: "Switchboard console: answers and the index's position",
		Subjects: []string{ix.cursorSubj, ix.answersSubj + ">"}, MaxMsgsPerSubject: 1, AllowDirect: true,
		MaxAge: 30 * 24 * time.Hour, MaxBytes: 64 << 20, Discard: jetstream.DiscardOld, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return ix.b.Classify(err, "console index")
	}
	events, err := js.Stream(ctx, ix.b.StreamName())
	if err != nil {
		return ix.b.Classify(err, "console index")
	}
	ix.mu.Lock()
	ix.runs, ix.audit, ix.events = runs, audit, events
	ix.mu.Unlock()
	return nil
}

// cursor is the events stream sequence the index has read up to.
func (ix *index) cursor(ctx context.Context) uint64 {
	m, err := ix.audit.GetLastMsgForSubject(ctx, ix.cursorSubj)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(string(m.Data), 10, 64)
	return n
}

func (ix *index) saveCursor(ctx context.Context, seq uint64) {
	if _, err := ix.b.JetStream().Publish(ctx, ix.cursorSubj, strconv.AppendUint(nil, seq, 10)); err != nil && ctx.Err() == nil {
		ix.log.Debug().Err(err).Msg("the console index's position could not be saved")
	}
}

// follow reads the events stream from the index's position, forever:
// it indexes each top-level run once and tells the live pages of every
// run's start and end. It returns when ctx is done.
func (ix *index) follow(ctx context.Context) {
	start := ix.cursor(ctx) + 1
	last := start - 1
	saved := last
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	defer func() {
		if last > saved {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			ix.saveCursor(sctx, last)
			cancel()
		}
	}()
	for ctx.Err() == nil {
		cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{ix.eventsSubj + ">"}, DeliverPolicy: jetstream.DeliverAllPolicy}
		if start > 1 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
		}
		cons, err := ix.b.JetStream().OrderedConsumer(ctx, ix.b.StreamName(), cfg)
		if err != nil {
			if !ix.pause(ctx, err) {
				return
			}
			continue
		}
		if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
			ix.caughtOne.Do(func() { close(ix.caughtUp) })
		}
		it, err := cons.Messages(jetstream.PullMaxMessages(512))
		if err != nil {
			if !ix.pause(ctx, err) {
				return
			}
			continue
		}
		stop := context.AfterFunc(ctx, it.Stop)
		for {
			m, err := it.Next()
			if err != nil {
				break
			}
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			ix.handle(ctx, m.Data(), md.Sequence.Stream)
			last, start = md.Sequence.Stream, md.Sequence.Stream+1
			if md.NumPending == 0 {
				ix.caughtOne.Do(func() { close(ix.caughtUp) })
			}
			select {
			case <-tick.C:
				ix.saveCursor(ctx, last)
				saved = last
			default:
			}
		}
		stop()
		it.Stop()
		if ctx.Err() == nil && !ix.pause(ctx, errors.New("the events stream's consumer stopped")) {
			return
		}
	}
}

// pause waits a second after a failure of the follower; false when ctx
// is done.
func (ix *index) pause(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	ix.log.Debug().Err(err).Msg("the console index follows the events stream again")
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// eventType is the type of an encoded event ({"v":1,"event":{"type":...),
// peeked without decoding the event as the bus encodes it, else decoded.
func eventType(data []byte) string {
	const key = `"type":"`
	if i := bytes.Index(data, []byte(key)); i >= 0 {
		rest := data[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 {
			return string(rest[:j])
		}
	}
	var w struct {
		Event struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if json.Unmarshal(data, &w) != nil {
		return ""
	}
	return w.Event.Type
}

type eventWire struct {
	V     int         `json:"v"`
	Event agent.Event `json:"event"`
}

func decodeEvent(data []byte) (agent.Event, error) {
	var w eventWire
	if err := json.Unmarshal(data, &w); err != nil {
		return agent.Event{}, wire.ProtocolError("console decode event", err)
	}
	if err := wire.CheckVersion("console decode event", w.V); err != nil {
		return agent.Event{}, err
	}
	return w.Event, nil
}

// handle indexes one event of the events stream.
func (ix *index) handle(ctx context.Context, data []byte, seq uint64) {
	switch agent.EventType(eventType(data)) {
	case agent.EventRunStarted, agent.EventFinal, agent.EventRunFailed, agent.EventModelTurn:
	default:
		return
	}
	ev, err := decodeEvent(data)
	if err != nil || ev.Parent != nil || ev.Run == "" {
		return
	}
	if ev.Type == agent.EventRunStarted {
		s := RunSummary{ID: ev.Run, Agent: ev.Agent, Input: clip(redactText(ev.Text), maxInput), Started: ev.Time}
		if added, err := ix.add(ctx, s, true); err == nil && added {
			s.State = "running"
			s.Seq = ix.seqOf(ctx, s.ID)
			ix.hub.publish(topicRuns, liveMsg{Kind: "run", Run: &s})
			return
		}
	}
	if !ix.hub.has(topicRuns) {
		return
	}
	s := RunSummary{ID: ev.Run}
	applyLast(&s, ev)
	ix.hub.publish(topicRuns, liveMsg{Kind: "state", Run: &s})
}

// add writes a run's index record: once (onlyNew: it must not exist), or
// replacing the existing one. added is false when the record exists.
func (ix *index) add(ctx context.Context, s RunSummary, onlyNew bool) (added bool, err error) {
	data, err := json.Marshal(s)
	if err != nil {
		return false, err
	}
	opts := []jetstream.PublishOpt{}
	if onlyNew {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(0))
	}
	_, err = ix.b.JetStream().Publish(ctx, ix.runsSubj+wire.Token(s.ID), data, opts...)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return false, nil
	}
	if err != nil {
		return false, ix.b.Classify(err, "console index")
	}
	return true, nil
}

func (ix *index) seqOf(ctx context.Context, run string) uint64 {
	m, err := ix.runs.GetLastMsgForSubject(ctx, ix.runsSubj+wire.Token(run))
	if err != nil {
		return 0
	}
	return m.Sequence
}

// summary reads one run's index record and its state.
func (ix *index) summary(ctx context.Context, run string) (*RunSummary, error) {
	m, err := ix.runs.GetLastMsgForSubject(ctx, ix.runsSubj+wire.Token(run))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, failure.New(failure.NotFound, failure.SourceBus, "no run "+strconv.Quote(run)+" in the console's index")
	}
	if err != nil {
		return nil, ix.b.Classify(err, "console run")
	}
	var s RunSummary
	if err := json.Unmarshal(m.Data, &s); err != nil {
		return nil, wire.ProtocolError("console run", err)
	}
	s.Seq = m.Sequence
	ix.state(ctx, &s)
	return &s, nil
}

// state fills s's state from the last event of its run.
func (ix *index) state(ctx context.Context, s *RunSummary) {
	m, err := ix.events.GetLastMsgForSubject(ctx, ix.eventsSubj+wire.Token(s.ID))
	if err != nil {
		s.State = "unknown"
		return
	}
	ev, err := decodeEvent(m.Data)
	if err != nil {
		s.State = "unknown"
		return
	}
	applyLast(s, ev)
}

// applyLast sets the state of s from its run's latest event.
func applyLast(s *RunSummary, ev agent.Event) {
	s.Updated, s.Turn = ev.Time, ev.Turn
	switch ev.Type {
	case agent.EventFinal:
		s.State = "done"
		if a := ev.Answer; a != nil {
			s.Turn, s.Tokens, s.CostUSD = a.Turns, a.Usage.Total(), usd(a.Cost.USD)
		}
	case agent.EventRunFailed:
		s.State = "failed"
		if f := ev.Failure; f != nil {
			if f.Kind == failure.Parked {
				s.State = "parked"
			}
			s.Error = f.Message
		}
	default:
		s.State = "running"
		if ev.Usage != nil {
			s.Tokens = ev.Usage.Total()
		}
	}
}

func usd(u llm.USD) float64 { return float64(u) / float64(llm.Dollar) }

// page returns up to limit runs, newest first, from those whose index
// sequence is below before (0: the newest), and the cursor of the next page
// (0: none). The index stream holds only run records, so a page is the
// records at the sequences just below before (fewer where a fork replaced
// a record, which leaves a gap: the page then reads further back); each
// record and its run's state are two direct gets, 16 runs at a time.
func (ix *index) page(ctx context.Context, before uint64, limit int) ([]RunSummary, uint64, error) {
	info, err := ix.runs.Info(ctx)
	if err != nil {
		return nil, 0, ix.b.Classify(err, "console runs")
	}
	first, lastSeq := info.State.FirstSeq, info.State.LastSeq
	if info.State.Msgs == 0 {
		return nil, 0, nil
	}
	if before == 0 || before > lastSeq+1 {
		before = lastSeq + 1
	}
	var out []RunSummary
	for hi := before; len(out) < limit && hi > first; {
		lo := first
		if want := uint64(limit - len(out)); hi > first+want {
			lo = hi - want
		}
		batch, err := ix.fetch(ctx, lo, hi)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, batch...)
		hi = lo
	}
	var next uint64
	if n := len(out); n > 0 && out[n-1].Seq > first {
		next = out[n-1].Seq
	}
	return out, next, nil
}

// fetch reads the run records at sequences [lo, hi) and their runs'
// states, newest first.
func (ix *index) fetch(ctx context.Context, lo, hi uint64) ([]RunSummary, error) {
	got := make([]*RunSummary, hi-lo)
	errs := make([]error, hi-lo)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for seq := lo; seq < hi; seq++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			m, err := ix.runs.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				return // replaced by a later record, or aged out
			}
			if err != nil {
				errs[seq-lo] = err
				return
			}
			var s RunSummary
			if json.Unmarshal(m.Data, &s) != nil {
				return
			}
			s.Seq = m.Sequence
			ix.state(ctx, &s)
			got[seq-lo] = &s
		})
	}
	wg.Wait()
	var out []RunSummary
	for i := len(got) - 1; i >= 0; i-- {
		if errs[i] != nil {
			return nil, ix.b.Classify(errs[i], "console runs")
		}
		if got[i] != nil {
			out = append(out, *got[i])
		}
	}
	return out, nil
}

// answerSubject is where the record of the answer to question of run is
// kept: <prefix>.console.answers.<run>.<question> ("_" without a run).
func (ix *index) answerSubject(run, question string) string {
	if run == "" {
		run = "_"
	}
	return ix.answersSubj + wire.Token(run) + "." + wire.Token(question)
}

// recordAnswer keeps who answered a question, and how.
func (ix *index) recordAnswer(ctx context.Context, a AnswerRecord) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = ix.b.JetStream().PublishMsg(ctx, &nats.Msg{Subject: ix.answerSubject(a.Run, a.Question), Data: data})
	if err != nil {
		return ix.b.Classify(err, "console record answer")
	}
	return nil
}

// answerOf returns the record of the answer to question id (nil: none).
func (ix *index) answerOf(ctx context.Context, id string) *AnswerRecord {
	m, err := ix.audit.GetLastMsgForSubject(ctx, ix.answersSubj+"*."+wire.Token(id))
	if err != nil {
		return nil
	}
	var a AnswerRecord
	if json.Unmarshal(m.Data, &a) != nil {
		return nil
	}
	return &a
}

// maxRunAnswers bounds the answers one run's page lists.
const maxRunAnswers = 200

// answersOf returns the records of the answers given to the questions of
// run, oldest first (at most maxRunAnswers).
func (ix *index) answersOf(ctx context.Context, run string) ([]AnswerRecord, error) {
	filter := ix.answersSubj + wire.Token(run) + ".>"
	out := []AnswerRecord{}
	for seq := uint64(1); len(out) < maxRunAnswers; {
		m, err := ix.audit.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(filter))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return out, ix.b.Classify(err, "console answers")
		}
		var a AnswerRecord
		if json.Unmarshal(m.Data, &a) == nil {
			out = append(out, a)
		}
		seq = m.Sequence + 1
	}
	return out, nil
}
