package bus

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// ElicitationDone announces, on <prefix>.elicit.done.<run>, that a URL-mode
// elicitation finished at its source (MCP notifications/elicitation/complete):
// a UI that showed the question can close it. Elicitation carries the
// question's identity (ID, Source, Run, Call).
type ElicitationDone struct {
	Time time.Time `json:"time"`
	agent.Elicitation
}

type elicitDoneWire struct {
	V int `json:"v"`
	ElicitationDone
}

// ElicitationComplete publishes e's end on <prefix>.elicit.done.<run>. It
// is the optional method of an agent.Elicitor. Core NATS, fire
// and forget: a failure to publish is logged, not returned.
func (e busElicitor) ElicitationComplete(ctx context.Context, el agent.Elicitation) {
	b := e.b
	data, err := json.Marshal(elicitDoneWire{V: version, ElicitationDone: ElicitationDone{Time: time.Now(), Elicitation: el}})
	if err == nil {
		err = b.publishMsg(b.subj.ElicitDone(el.Run), data, traceHeader(ctx))
	}
	if err != nil {
		b.log.Warn().Err(err).Str("elicitation", el.ID).Msg("the end of an elicitation could not be announced")
	}
}

// SubscribeElicitationDone follows the ends of run's URL-mode elicitations
// live (run "*" follows every run's). Close the subscription when done.
func (b *Bus) SubscribeElicitationDone(run string) (*Subscription[ElicitationDone], error) {
	subject := b.subj.ElicitDone(run)
	if run == "*" {
		subject = b.subj.done + "*"
	}
	return liveSubscription(b, subject, "subscribe elicitation done", decodeElicitationDone)
}

// decodeElicitationDone decodes an elicitation-done payload.
func decodeElicitationDone(data []byte) (ElicitationDone, error) {
	var w elicitDoneWire
	if err := json.Unmarshal(data, &w); err != nil {
		return ElicitationDone{}, protocolError("decode elicitation done", err)
	}
	if err := checkVersion("decode elicitation done", w.V); err != nil {
		return ElicitationDone{}, err
	}
	if w.ID == "" {
		return ElicitationDone{}, &failure.Error{Kind: failure.Protocol, Source: failure.SourceBus, Op: "decode elicitation done",
			Message: "an elicitation-done payload without the elicitation's id"}
	}
	return w.ElicitationDone, nil
}

var _ interface {
	ElicitationComplete(context.Context, agent.Elicitation)
} = busElicitor{} // the optional method of an agent.Elicitor
