package agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// Config configures a Handler. Zero values mean the defaults.
type Config struct {
	// Runner runs every AG-UI run (required).
	Runner agent.Runner
	// MaxBody bounds a RunAgentInput's size (default 1 MiB).
	MaxBody int64
	// AnswerTimeout bounds how long a run waits, interrupted, for the
	// client's resume (default 10 minutes); then the run is cancelled.
	AnswerTimeout time.Duration
	// State keeps a "switchboard" key of the AG-UI state (the run id, the
	// turn and its usage) with STATE_SNAPSHOT and STATE_DELTA events.
	State bool
}

// Handler is an http.Handler that runs Config.Runner for AG-UI clients:
// each POST of a RunAgentInput answers with a text/event-stream of AG-UI
// events. A [Conversational] Runner continues the messages the client
// sent; the client's tools (RunAgentInput.tools) are offered to the run
// beside the Runner's own (agent.Input.Tools) and its context items,
// state and system messages reach its system prompt
// (agent.Input.Instructions). A question the run asks (a permission or an
// elicitation) ends the stream with an interrupt outcome while the run
// waits; the client's next RunAgentInput, whose resume entry answers it,
// streams the rest of the same run. A call of a client tool ends the
// stream with the call pending (RUN_FINISHED, pendingToolCallIds) while
// the run waits; the client's next RunAgentInput, whose last messages are
// the tool messages answering it, streams the rest of the same run. A
// thread has at most one run at a time.
type Handler struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	pending map[string]*liveRun // interrupt id → waiting run
	threads map[string]*liveRun // thread id → its run (streaming or waiting)
}

// New returns a Handler; it starts nothing until a request comes.
func New(ctx context.Context, cfg Config) (*Handler, error) {
	if cfg.Runner == nil {
		return nil, failure.New(failure.InvalidArgs, failure.SourceAgent, "agui: Config.Runner is required")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.AnswerTimeout <= 0 {
		cfg.AnswerTimeout = 10 * time.Minute
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &Handler{cfg: cfg, ctx: hctx, cancel: cancel, pending: map[string]*liveRun{}, threads: map[string]*liveRun{}}, nil
}

// Close cancels every run the handler owns and waits for them to end.
func (h *Handler) Close() error {
	h.cancel()
	h.wg.Wait()
	return nil
}

type item struct {
	ev  agent.Event
	err error
}

type ask struct {
	e     agent.Elicitation
	reply chan agent.ElicitationResult
}

// liveRun is a run of the Runner, owned by the handler: its goroutine
// iterates the stream into events; its questions arrive on asks, and its
// calls of client tools wake awaits.
type liveRun struct {
	thread string
	mapper *Mapper
	events chan item
	asks   chan *ask
	awaits chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	// Under Handler.mu: the question the run waits on while interrupted,
	// the client tool calls waiting for the client's result, whether a
	// request streams the run, and the timer that cancels the run when no
	// request comes back for it.
	waiting   *ask
	calls     map[string]chan clientResult
	streaming bool
	timer     *time.Timer
}

// errConflict is the answer to a second request for a thread whose run is
// streaming.
func errConflict(thread string) error {
	return failure.New(failure.Conflict, failure.SourceAgent, fmt.Sprintf("AG-UI thread %q has a run in progress", thread))
}

// ServeHTTP answers one RunAgentInput.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "AG-UI: POST a RunAgentInput", http.StatusMethodNotAllowed)
		return
	}
	in, err := DecodeInput(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody+1), h.cfg.MaxBody)
	if err != nil {
		http.Error(w, errorText(err), http.StatusBadRequest)
		return
	}
	run, parent, err := h.runFor(in)
	if err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, failure.Conflict) {
			code = http.StatusConflict
		}
		http.Error(w, errorText(err), code)
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	write := func(evs []Event) bool {
		for _, e := range evs {
			b, err := json.Marshal(e)
			if err != nil {
				return false
			}
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return false
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	var state map[string]any
	if len(in.State) > 0 {
		_ = json.Unmarshal(in.State, &state)
	} else {
		state = map[string]any{}
	}
	run.mapper.threadID = in.ThreadID
	if !write(run.mapper.Start(in.RunID, parent, state)) {
		h.stop(run)
		return
	}
	for {
		select {
		case it, ok := <-run.events:
			if !ok {
				return
			}
			end := it.err != nil || it.ev.Type == agent.EventFinal || it.ev.Type == agent.EventRunFailed
			evs := run.mapper.Map(it.ev)
			if end {
				if ins := h.parked(r.Context(), run, it.err); len(ins) > 0 {
					<-run.done
					write(append(evs, run.mapper.Interrupt(ins...)...))
					return
				}
				evs = append(evs, run.mapper.Finish(it.ev, it.err)...)
			}
			if !write(evs) {
				h.stop(run)
				return
			}
			if end {
				<-run.done
				return
			}
		case a := <-run.asks:
			// The events are made before the run is left waiting: from
			// then on, another request may take the run (and its Mapper).
			id := run.mapper.id("interrupt")
			evs := run.mapper.Interrupt(interruptOf(id, a.e))
			h.park(id, run, a)
			write(evs)
			return
		case <-run.awaits:
			ids := h.clientCalls(run)
			if len(ids) == 0 {
				continue // a wake-up for calls already answered
			}
			evs := run.mapper.AwaitTools(ids...)
			h.await(run)
			write(evs)
			return
		case <-r.Context().Done():
			h.stop(run)
			return
		}
	}
}

// runFor starts a run for in, or finds the waiting run its resume entries
// or its last tool messages answer (and delivers the answers); parent is
// the AG-UI run that left it waiting.
func (h *Handler) runFor(in *RunAgentInput) (*liveRun, string, error) {
	if len(in.Resume) > 0 {
		h.mu.Lock()
		var run *liveRun
		var entry ResumeEntry
		for _, e := range in.Resume {
			if r, ok := h.pending[e.InterruptID]; ok {
				run, entry = r, e
				delete(h.pending, e.InterruptID)
				break
			}
		}
		var a *ask
		if run != nil {
			run.take()
			a, run.waiting = run.waiting, nil
		}
		h.mu.Unlock()
		if run != nil {
			parent := run.mapper.runID
			a.reply <- answerOf(a.e, entry)
			return run, parent, nil
		}
		if run, parent, ok, err := h.resumeParked(in); ok || err != nil {
			return run, parent, err
		}
		// Unrecognised entries: the spec says proceed without them.
	}
	c, err := conversationOf(in)
	if err != nil {
		return nil, "", err
	}
	run, ok, err := h.deliver(in, c.trailing)
	if err != nil {
		return nil, "", err
	}
	if ok {
		return run, run.mapper.runID, nil
	}
	if n := len(c.trailing); n > 0 && c.trailing[n-1].Role == "tool" {
		// No run awaits these results (it timed out, or ran in another
		// process): a Conversational Runner continues the conversation
		// with them, as the agent's next turn.
		if _, ok := h.cfg.Runner.(Conversational); ok {
			hist, _, err := historyOf(in.Messages)
			if err != nil {
				return nil, "", err
			}
			c.history, c.input, c.parts = hist, "", nil
			return h.start(in, c)
		}
	}
	for _, m := range c.trailing {
		if m.Role == "tool" || len(m.ToolCalls) > 0 {
			return nil, "", bad("field %q: the tool calls after the last user message belong to no run of thread %q that awaits them, and the Runner cannot continue a conversation; a new user message continues the thread", "messages", in.ThreadID)
		}
	}
	if c.input == "" && len(c.parts) == 0 {
		return nil, "", bad("field %q holds no user message with text", "messages")
	}
	return h.start(in, c)
}

// deliver hands the client's tool messages at the end of trailing to the
// run of in's thread that awaits them (ok is false when none does).
func (h *Handler) deliver(in *RunAgentInput, trailing []Message) (*liveRun, bool, error) {
	var results []Message
	for i := len(trailing) - 1; i >= 0 && trailing[i].Role == "tool"; i-- {
		results = append(results, trailing[i])
	}
	if len(results) == 0 {
		return nil, false, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	run := h.threads[in.ThreadID]
	if run == nil {
		return nil, false, nil
	}
	if run.streaming {
		return nil, false, errConflict(in.ThreadID)
	}
	n := 0
	for i := len(results) - 1; i >= 0; i-- {
		m := results[i]
		reply, ok := run.calls[m.ToolCallID]
		if !ok {
			continue
		}
		delete(run.calls, m.ToolCallID)
		r := toolResultOf(m, "")
		reply <- clientResult{text: r.Content, isError: r.IsError}
		run.mapper.results[m.ToolCallID] = true // the client has its result
		n++
	}
	if n == 0 {
		return nil, false, nil
	}
	run.take()
	return run, true, nil
}

// take marks a waiting run as streamed by the request that answered it
// (under Handler.mu). Client calls still unanswered wake the stream at
// once, which ends it with them pending: their earlier wake-up was taken
// by the request that announced them.
func (run *liveRun) take() {
	if run.timer != nil {
		run.timer.Stop()
	}
	run.streaming = true
	if len(run.calls) > 0 {
		select {
		case run.awaits <- struct{}{}:
		default:
		}
	}
}

// start starts a run of conversation c for in: a Conversational Runner
// continues c's history; the client's tools, context and instructions go
// in the run's agent.Input. A waiting run of the same thread is cancelled
// (the client moved on); a streaming one is a conflict.
func (h *Handler) start(in *RunAgentInput, c conversation) (*liveRun, string, error) {
	h.mu.Lock()
	old := h.threads[in.ThreadID]
	if old != nil && old.streaming {
		h.mu.Unlock()
		return nil, "", errConflict(in.ThreadID)
	}
	h.mu.Unlock()
	if old != nil {
		h.abandon(old)
	}
	run := h.launch(in, func(ctx context.Context, run *liveRun) iter.Seq2[agent.Event, error] {
		input := agent.Input{Parts: c.parts, Instructions: c.instructions, Conversation: in.ThreadID}
		for _, t := range in.Tools {
			input.Tools = append(input.Tools, newClientTool(h, run, t))
		}
		ctx = agent.WithInput(ctx, input)
		if cv, ok := h.cfg.Runner.(Conversational); ok {
			return cv.NewSessionFrom(c.history).Stream(ctx, c.input)
		}
		return h.cfg.Runner.Stream(ctx, c.input)
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := h.threads[in.ThreadID]; cur != nil && cur != run {
		// Another request started a run of the thread meanwhile.
		run.cancel()
		return nil, "", errConflict(in.ThreadID)
	}
	return run, "", nil
}

// abandon cancels a waiting run and forgets its interrupts.
func (h *Handler) abandon(run *liveRun) {
	h.mu.Lock()
	for id, r := range h.pending {
		if r == run {
			delete(h.pending, id)
		}
	}
	if run.timer != nil {
		run.timer.Stop()
	}
	h.mu.Unlock()
	h.stop(run)
}

// launch starts a run whose events stream yields, on a goroutine the
// handler owns, as the run of in's thread.
func (h *Handler) launch(in *RunAgentInput, stream func(context.Context, *liveRun) iter.Seq2[agent.Event, error]) *liveRun {
	ctx, cancel := context.WithCancel(h.ctx)
	run := &liveRun{thread: in.ThreadID, mapper: NewMapper(in.ThreadID, in.RunID, h.cfg.State), events: make(chan item),
		asks: make(chan *ask), awaits: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{}),
		calls: map[string]chan clientResult{}, streaming: true}
	ctx = agent.WithElicitor(ctx, agent.ElicitorFunc(func(qctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		a := &ask{e: e, reply: make(chan agent.ElicitationResult, 1)}
		select {
		case run.asks <- a:
		case <-qctx.Done():
			return agent.ElicitationResult{}, qctx.Err()
		}
		select {
		case res := <-a.reply:
			return res, nil
		case <-qctx.Done():
			return agent.ElicitationResult{}, qctx.Err()
		}
	}))
	h.mu.Lock()
	if h.threads[in.ThreadID] == nil {
		h.threads[in.ThreadID] = run
	}
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer close(run.done)
		defer close(run.events)
		defer func() {
			h.mu.Lock()
			if h.threads[run.thread] == run {
				delete(h.threads, run.thread)
			}
			h.mu.Unlock()
		}()
		for ev, err := range stream(ctx, run) {
			select {
			case run.events <- item{ev, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return run
}

// park records run as waiting on a under interrupt id, cancelling it when
// no answer comes within AnswerTimeout.
func (h *Handler) park(id string, run *liveRun, a *ask) {
	h.mu.Lock()
	defer h.mu.Unlock()
	run.waiting = a
	h.pending[id] = run
	run.streaming = false
	run.timer = time.AfterFunc(h.cfg.AnswerTimeout, func() {
		h.mu.Lock()
		_, still := h.pending[id]
		delete(h.pending, id)
		h.mu.Unlock()
		if still {
			run.cancel()
		}
	})
}

// clientCalls returns the client tool calls run waits for.
func (h *Handler) clientCalls(run *liveRun) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]string, 0, len(run.calls))
	for id := range run.calls {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// await leaves run waiting for the client's results of its client tool
// calls, cancelling it when none come within AnswerTimeout.
func (h *Handler) await(run *liveRun) {
	h.mu.Lock()
	defer h.mu.Unlock()
	run.streaming = false
	run.timer = time.AfterFunc(h.cfg.AnswerTimeout, func() {
		h.mu.Lock()
		still := !run.streaming
		h.mu.Unlock()
		if still {
			run.cancel()
		}
	})
}

// stop cancels run and waits for its goroutine.
func (h *Handler) stop(run *liveRun) {
	run.cancel()
	<-run.done
}

func errorText(err error) string {
	var fe *failure.Error
	if errors.As(err, &fe) && fe.Message != "" {
		return fe.Message
	}
	return err.Error()
}

// parkedPrefix marks the interrupt id of a question parked in a durable
// inbox; the rest is the question's id.
const parkedPrefix = "parked-"

// Resumable is a Runner whose runs park their questions in a durable
// inbox and resume once they are answered: an *agent.Agent with
// Config.Durable is one. The handler offers a parked run's questions as
// interrupts, and a client's answers resume it, when Config.Runner is
// Resumable.
type Resumable interface {
	agent.Runner
	// Name is the agent's name, which its parked questions carry.
	Name() string
	// Durability holds the inbox the questions are parked in.
	Durability() agent.Durability
	// Inbox lists the questions waiting for an answer.
	Inbox(ctx context.Context) ([]agent.Question, error)
	// ResumeStream continues the run id once its questions are answered.
	ResumeStream(ctx context.Context, id string) iter.Seq2[agent.Event, error]
}

var _ Resumable = (*agent.Agent)(nil)

// parked returns the interrupts of a run that ended parked: when the
// Runner is Resumable, its questions for this run.
func (h *Handler) parked(ctx context.Context, run *liveRun, err error) []Interrupt {
	a, ok := h.cfg.Runner.(Resumable)
	if !ok || !errors.Is(err, failure.Parked) {
		return nil
	}
	qs, qerr := a.Inbox(ctx)
	if qerr != nil {
		return nil
	}
	var ins []Interrupt
	for _, q := range qs {
		if q.Run == run.mapper.top {
			ins = append(ins, interruptOf(parkedPrefix+q.ID, q.Elicitation))
		}
	}
	return ins
}

// resumeParked answers the parked questions in.Resume names and resumes
// their run (ok is false when it names none).
func (h *Handler) resumeParked(in *RunAgentInput) (*liveRun, string, bool, error) {
	a, ok := h.cfg.Runner.(Resumable)
	if !ok || a.Durability().Inbox == nil {
		return nil, "", false, nil
	}
	inbox := a.Durability().Inbox
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	runID := ""
	for _, e := range in.Resume {
		id, ok := strings.CutPrefix(e.InterruptID, parkedPrefix)
		if !ok {
			continue
		}
		q, err := inbox.LoadQuestion(ctx, id)
		if err != nil || q.Agent != a.Name() {
			continue
		}
		if _, err := inbox.AnswerQuestion(ctx, id, answerOf(q.Elicitation, e)); err != nil {
			return nil, "", true, err
		}
		runID = q.Run
	}
	if runID == "" {
		return nil, "", false, nil
	}
	run := h.launch(in, func(ctx context.Context, _ *liveRun) iter.Seq2[agent.Event, error] { return a.ResumeStream(ctx, runID) })
	run.mapper.top = runID
	return run, in.ParentRunID, true, nil
}
