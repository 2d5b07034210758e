package worker

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// Elicitor returns the agent.Elicitor to give an agent a worker serves
// (agent.Config.Elicitor): inside a run the worker took, a question (a
// permission ask, a tool's Call.Elicit) goes back over the bus to the pool
// that started the run, which answers it with its caller's elicitor. Outside
// such a run the question goes to fallback (nil: declined).
//
// Failures are typed as for bus requests: a pool that no longer listens is
// Unavailable, no answer by the deadline (ctx's, else
// ServeConfig.ElicitTimeout) is Timeout. A person's refusal is a result.
func Elicitor(fallback agent.Elicitor) agent.Elicitor {
	return agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		j, ok := ctx.Value(jobKey{}).(*job)
		if !ok {
			if fallback == nil {
				return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "no one is available to answer questions"}, nil
			}
			return fallback.Elicit(ctx, e)
		}
		return j.ask(ctx, e)
	})
}

// ask sends a question to the job's caller and waits for the answer.
func (j *job) ask(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	s := j.s
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.ElicitTimeout)
		defer cancel()
	}
	dl, _ := ctx.Deadline()
	data, err := wire.EncodeRequest(e, dl)
	if err != nil {
		return agent.ElicitationResult{}, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Name: s.key,
			Op: "elicit", Err: err, Message: "the question could not be encoded"}
	}
	msg, err := s.nc.RequestWithContext(ctx, j.elicit, data)
	if err != nil {
		fe := *failure.From(s.b.Classify(err, "elicit"))
		fe.Name = s.key
		if fe.Kind == failure.Unavailable {
			fe.Message = "the caller of the remote run no longer listens for questions"
		}
		return agent.ElicitationResult{}, &fe
	}
	return wire.DecodeElicitationReply(msg.Data)
}

// answerElicitation answers a remote run's question with the caller's
// elicitor: the tool call the pool runs in (agent.CallFromContext), else
// PoolConfig.Elicitor, else a decline. ctx is the caller's.
func (p *Pool) answerElicitation(ctx context.Context, msg *nats.Msg) {
	reply := func(res agent.ElicitationResult, err error) {
		data, merr := wire.EncodeReply(res, err)
		if merr != nil {
			data, _ = wire.EncodeReply(agent.ElicitationResult{}, &failure.Error{Kind: failure.Internal,
				Source: failure.SourceBus, Name: p.key.Name, Op: "elicit", Err: merr, Message: "the answer could not be encoded"})
		}
		if msg.Reply == "" {
			return
		}
		if err := msg.Respond(data); err != nil {
			p.log.Debug().Err(err).Msg("an answer to a remote question was not sent")
		}
	}
	e, deadline, err := wire.DecodeRequest[agent.Elicitation](msg.Data, "decode elicitation")
	if err != nil {
		failure.Or(p.policy).Handle(ctx, err)
		reply(agent.ElicitationResult{}, err)
		return
	}
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	var res agent.ElicitationResult
	switch call, ok := agent.CallFromContext(ctx); {
	case ok:
		res, err = call.Elicit(ctx, e)
	case p.cfg.Elicitor != nil:
		res, err = p.cfg.Elicitor.Elicit(ctx, e)
	default:
		res = agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "no one is available to answer questions"}
	}
	if err != nil {
		reply(agent.ElicitationResult{}, err)
		return
	}
	reply(res, nil)
}
