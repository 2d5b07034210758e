package agent

import (
	"context"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// generate runs one model turn under the failure policy, streaming its
// text as model_text events. The model runs on a goroutine of its own, its
// deltas handed over by channel, so that events are only ever yielded from
// the run's goroutine whichever goroutine the model calls OnText on.
func (r *run) generate(hist []llm.Message, defs []llm.ToolDef, gate *outGate) (*llm.Response, error) {
	deltas := make(chan string, 16)
	type outcome struct {
		resp *llm.Response
		err  error
	}
	done := make(chan outcome, 1)
	gctx, cancel := context.WithCancelCause(r.ctx)
	defer cancel(nil)
	go func() {
		resp, err := r.traceChat(gctx, hist, defs, func(d string) {
			select {
			case deltas <- d:
			case <-gctx.Done():
			}
		})
		done <- outcome{resp, err}
	}()
	// The input guard runs beside the first turn, whose text is held
	// until it passes; a trip cancels the turn.
	var inDone <-chan struct{}
	if r.input != nil {
		inDone = r.input.done
	}
	inputChecked := func() bool {
		inDone = nil
		r.emitGuards(r.ctx, gate.turn, nil, r.input.out.infos)
		if r.input.out.trip != nil || r.input.out.text != r.input.in {
			return false
		}
		gate.held = false
		gate.release(false)
		return true
	}
	for {
		select {
		case d := <-deltas:
			gate.add(d)
		case <-inDone:
			if !inputChecked() {
				cancel(errGuardTripped)
				<-done
				return nil, errGuardTripped
			}
		case o := <-done:
			for drained := false; !drained; {
				select {
				case d := <-deltas:
					gate.add(d)
				default:
					drained = true
				}
			}
			if inDone != nil {
				<-inDone // bounded by the guards' deadlines
				if !inputChecked() {
					return nil, errGuardTripped
				}
			}
			return o.resp, r.modelFailure(o.err)
		}
	}
}

// modelTurn asks the model for one turn through the policy (transient
// provider failures are retried), recovering a panic.
func (r *run) modelTurn(ctx context.Context, hist []llm.Message, defs []llm.ToolDef, onText func(string)) (*llm.Response, error) {
	model := r.a.cfg.Model
	var resp *llm.Response
	err := r.a.execute(ctx, failure.Key{Source: failure.SourceModel, Name: model.Name()}, func(ctx context.Context) (err error) {
		r.traceAttempt(ctx)
		defer func() {
			if v := recover(); v != nil {
				err = &failure.Error{Kind: failure.Panic, Source: failure.SourceModel, Name: model.Name(), Err: panicError(v)}
			}
		}()
		req := r.request(hist, defs, onText)
		req.Output = r.output()
		resp, err = model.Generate(ctx, req)
		if err == nil && resp == nil {
			err = &failure.Error{Kind: failure.Model, Message: "the model returned no response"}
		}
		return err
	})
	return resp, err
}

// modelFailure classifies a model turn's failure: unclassified errors are
// Model failures, attributed to the model.
func (r *run) modelFailure(err error) error {
	if err == nil {
		return nil
	}
	c := *failure.From(err)
	if c.Kind == failure.Unknown {
		c.Kind = failure.Model
	}
	if c.Source == "" || c.Source == failure.SourceModel {
		c.Source, c.Name = failure.SourceModel, r.a.cfg.Model.Name()
	}
	return &c
}
