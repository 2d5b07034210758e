package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// outMsg is an encoded message waiting to be published.
type outMsg struct {
	subject string
	data    []byte
	header  nats.Header // trace context (nil: none)
	// flushed, on a flush marker, is closed when the marker is reached.
	flushed chan struct{}
}

// eventPublisher publishes emitted events from one goroutine, in order,
// through a bounded buffer: Emit never blocks the agent loop.
type eventPublisher struct {
	b       *Bus
	ch      chan outMsg
	stop    chan struct{}
	exited  chan struct{}
	once    sync.Once
	dropped atomic.Int64
}

func newEventPublisher(b *Bus) *eventPublisher {
	p := &eventPublisher{b: b, ch: make(chan outMsg, b.cfg.EventBuffer), stop: make(chan struct{}), exited: make(chan struct{})}
	go p.run()
	return p
}

func (p *eventPublisher) enqueue(m outMsg) {
	select {
	case p.ch <- m:
	default:
		p.dropped.Add(1)
	}
}

// run is owned by the Bus; close stops it.
func (p *eventPublisher) run() {
	defer close(p.exited)
	for {
		select {
		case m := <-p.ch:
			p.publish(m)
		case <-p.stop:
			for {
				select {
				case m := <-p.ch:
					p.publish(m)
				default:
					p.reportDrops()
					return
				}
			}
		}
	}
}

func (p *eventPublisher) publish(m outMsg) {
	if m.flushed != nil {
		close(m.flushed)
		return
	}
	if err := p.b.publishMsg(m.subject, m.data, m.header); err != nil {
		p.b.pol().Handle(p.b.bg, &failure.Error{Kind: failure.KindOf(classify(err, "publish event")),
			Source: failure.SourceBus, Name: m.subject, Op: "publish event", Err: err,
			Message: "an event could not be published on the bus"})
	}
	if p.dropped.Load() > 0 {
		p.reportDrops()
	}
}

func (p *eventPublisher) reportDrops() {
	if n := p.dropped.Swap(0); n > 0 {
		p.b.pol().Handle(p.b.bg, &failure.Error{Kind: failure.Transient, Source: failure.SourceBus,
			Op: "publish event", Message: fmt.Sprintf("%d events were dropped because the bus publisher fell behind", n)})
	}
}

// close publishes what is buffered and stops the goroutine.
func (p *eventPublisher) close(ctx context.Context) {
	p.once.Do(func() { close(p.stop) })
	select {
	case <-p.exited:
	case <-ctx.Done():
	}
}

// Flush waits until the events emitted so far are published and the server
// has received them, or ctx is done.
func (b *Bus) Flush(ctx context.Context) error {
	if b.isClosed.Load() {
		return b.fail(failure.Unavailable, "flush", nil, "the bus is closed")
	}
	m := outMsg{flushed: make(chan struct{})}
	select {
	case b.events.ch <- m:
	case <-ctx.Done():
		return classify(ctx.Err(), "flush")
	}
	select {
	case <-m.flushed:
	case <-b.events.exited:
	case <-ctx.Done():
		return classify(ctx.Err(), "flush")
	}
	return classify(b.nc.FlushWithContext(ctx), "flush")
}

// Emit publishes a run event on <prefix>.events.<run> (and a tool progress
// event also on <prefix>.progress.<run>). It implements agent.EventSink: it
// encodes the event and hands it to a bounded buffer, and never blocks;
// when the buffer is full the event is dropped and the drops are reported
// through the failure policy.
func (b *Bus) Emit(ctx context.Context, ev agent.Event) {
	if b.isClosed.Load() {
		return
	}
	data, err := json.Marshal(eventWire{V: version, Event: ev})
	if err != nil {
		b.pol().Handle(ctx, &failure.Error{Kind: failure.Internal, Source: failure.SourceBus, Op: "encode event", Err: err,
			Message: "an event could not be encoded"})
		return
	}
	b.events.enqueue(outMsg{subject: b.subj.Events(ev.Run), data: data, header: traceHeader(ctx)})
	if ev.Type == agent.EventToolProgress && ev.Progress != nil {
		pu := ProgressUpdate{Run: ev.Run, Progress: ev.Progress.Progress, Total: ev.Progress.Total, Message: ev.Progress.Message}
		if ev.Call != nil {
			pu.Call = ev.Call.ID
		}
		if data, err := json.Marshal(progressWire{V: version, ProgressUpdate: pu}); err == nil {
			b.events.enqueue(outMsg{subject: b.subj.Progress(ev.Run), data: data, header: traceHeader(ctx)})
		}
	}
}

var _ agent.EventSink = (*Bus)(nil)

// SubscribeEvents replays a run's events from the start of the stream and
// then follows new ones. The subscription is established when it returns.
func (b *Bus) SubscribeEvents(ctx context.Context, run string) (*Subscription[agent.Event], error) {
	return replaySubscription(ctx, b, b.subj.Events(run), "subscribe events", decodeEvent)
}

// Subscribe yields a run's events from its start, then follows it until
// the run's EventFinal or EventRunFailed (yielded last), or until ctx is
// done. Malformed payloads are yielded as Protocol
// errors; a failure to subscribe is yielded once.
func (b *Bus) Subscribe(ctx context.Context, run string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		sub, err := b.SubscribeEvents(ctx, run)
		if err != nil {
			yield(agent.Event{}, err)
			return
		}
		for ev, err := range sub.until(ctx, func(ev agent.Event) bool {
			return ev.Type == agent.EventFinal || ev.Type == agent.EventRunFailed
		}, false) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Replay yields the events of a run stored so far, then ends (it does not
// wait for new ones).
func (b *Bus) Replay(ctx context.Context, run string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		sub, err := b.SubscribeEvents(ctx, run)
		if err != nil {
			yield(agent.Event{}, err)
			return
		}
		for ev, err := range sub.until(ctx, nil, true) {
			if !yield(ev, err) {
				return
			}
		}
	}
}
