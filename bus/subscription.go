package bus

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/failure"
)

// Subscription is a typed subscription to a subject: live (core NATS) or
// replaying a JetStream stream from its start and then following it. Close
// it when done (All closes it when the loop ends).
type Subscription[T any] struct {
	op     string
	decode func([]byte) (T, error)
	next   func(ctx context.Context) ([]byte, uint64, error)
	stop   func()
	once   sync.Once
	// pending, for replays, is the number of stored messages when the
	// subscription began.
	pending uint64
	replay  bool
}

// Next returns the next message. Malformed payloads are Protocol failures
// (the subscription goes on); a done ctx is Canceled or Timeout; a closed
// connection is Unavailable.
func (s *Subscription[T]) Next(ctx context.Context) (T, error) {
	var zero T
	data, _, err := s.next(ctx)
	if err != nil {
		return zero, classify(err, s.op)
	}
	return s.decode(data)
}

// Close ends the subscription.
func (s *Subscription[T]) Close() error {
	s.once.Do(s.stop)
	return nil
}

// All yields messages until ctx is done (it then ends without an error),
// the connection closes (a final Unavailable error), or the loop stops.
// A malformed payload is yielded as a Protocol error and the iteration goes
// on. All closes the subscription when it ends.
func (s *Subscription[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return s.until(ctx, nil, false)
}

// until yields messages until stop returns true for one (that message is
// yielded first), ctx is done, or, when caughtUp, the messages stored when
// the subscription began have all been yielded.
func (s *Subscription[T]) until(ctx context.Context, stop func(T) bool, caughtUp bool) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		defer s.Close()
		var zero T
		if caughtUp && s.replay && s.pending == 0 {
			return
		}
		for {
			data, pending, err := s.next(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				yield(zero, classify(err, s.op))
				return
			}
			v, err := s.decode(data)
			if !yield(v, err) {
				return
			}
			if err == nil && stop != nil && stop(v) {
				return
			}
			if caughtUp && pending == 0 {
				return
			}
		}
	}
}

// liveSubscription subscribes on core NATS. The subscription is known to
// the server when it returns.
func liveSubscription[T any](b *Bus, subject, op string, decode func([]byte) (T, error)) (*Subscription[T], error) {
	sub, err := b.nc.SubscribeSync(subject)
	if err != nil {
		return nil, classify(err, op)
	}
	if err := b.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, classify(err, op)
	}
	return &Subscription[T]{
		op: op, decode: decode,
		next: func(ctx context.Context) ([]byte, uint64, error) {
			m, err := sub.NextMsgWithContext(ctx)
			if err != nil {
				return nil, 0, err
			}
			return m.Data, 1, nil
		},
		stop: func() { _ = sub.Unsubscribe() },
	}, nil
}

// replaySubscription reads the bus stream's messages on subject from the
// start with an ordered consumer, then follows new ones.
func replaySubscription[T any](ctx context.Context, b *Bus, subject, op string, decode func([]byte) (T, error)) (*Subscription[T], error) {
	var cons jetstream.Consumer
	err := b.pol().Execute(ctx, failure.Key{Source: failure.SourceBus, Name: "jetstream"}, func(ctx context.Context) error {
		c, err := b.js.OrderedConsumer(ctx, b.stream, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{subject},
			DeliverPolicy:  jetstream.DeliverAllPolicy,
		})
		cons = c
		return classify(err, op)
	})
	if err != nil {
		return nil, err
	}
	info := cons.CachedInfo()
	pending := uint64(0)
	if info != nil {
		pending = info.NumPending
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, classify(err, op)
	}
	return &Subscription[T]{
		op: op, decode: decode, replay: true, pending: pending,
		next: func(ctx context.Context) ([]byte, uint64, error) {
			m, err := it.Next(jetstream.NextContext(ctx))
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					return nil, 0, nats.ErrConnectionClosed
				}
				return nil, 0, err
			}
			md, err := m.Metadata()
			if err != nil {
				return m.Data(), 1, nil
			}
			return m.Data(), md.NumPending, nil
		},
		stop: it.Stop,
	}, nil
}
