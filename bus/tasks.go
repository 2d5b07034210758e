package bus

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/bus/task"
	"github.com/switchboard-dev/switchboard/failure"
)

// PublishTask publishes an A2A task update on <prefix>.a2a.tasks.<task> and
// waits for JetStream to store it (transient failures are retried through
// the failure policy). A zero Time is set to now.
func (b *Bus) PublishTask(ctx context.Context, u task.Update) error {
	if u.Task == "" {
		return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "publish task",
			Err: errors.New("empty task id"), Message: "a task update needs a task id"}
	}
	if u.Kind == "" {
		u.Kind = "status"
	}
	if u.Time.IsZero() {
		u.Time = time.Now().UTC()
	}
	data, err := json.Marshal(taskWire{V: version, Update: u})
	if err != nil {
		return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "publish task", Err: err,
			Message: "the task update could not be encoded"}
	}
	subject := b.subj.Task(u.Task)
	return b.pol().Execute(ctx, failure.Key{Source: failure.SourceBus, Name: "jetstream"}, func(ctx context.Context) error {
		_, err := b.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data, Header: traceHeader(ctx)})
		return b.classifyConn(err, "publish task")
	})
}

// SubscribeTask replays a task's updates from the start, then follows them
// until the update marked Final (yielded last) or until ctx is done.
func (b *Bus) SubscribeTask(ctx context.Context, id string) iter.Seq2[task.Update, error] {
	return func(yield func(task.Update, error) bool) {
		sub, err := replaySubscription(ctx, b, b.subj.Task(id), "subscribe task", decodeTaskUpdate)
		if err != nil {
			yield(task.Update{}, err)
			return
		}
		for u, err := range sub.until(ctx, func(u task.Update) bool { return u.Final }, false) {
			if !yield(u, err) {
				return
			}
		}
	}
}
