package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// Answers to parked questions travel on <prefix>.answers.<agent>.<question>
// (agent and question ids as storeKey makes them), kept in the JetStream
// stream <STREAM>_ANSWERS (file storage, work-queue retention: an answer
// is removed once a process has applied it). Each agent's processes share
// one durable consumer, answers_<agent>: an answer goes to one of them,
// and to another if that one dies before it has resumed the run.

// answerWire is the payload of an answer.
type answerWire struct {
	V        int                     `json:"v"`
	Question string                  `json:"question"`
	Agent    string                  `json:"agent"`
	Run      string                  `json:"run,omitempty"`
	Answer   agent.ElicitationResult `json:"answer"`
}

// Limits of the answers stream and of a server of answers.
const (
	// answersMaxAge drops answers nobody applied for a week.
	answersMaxAge = 7 * 24 * time.Hour
	// answersDedup is the stream's duplicate window: a second answer to a
	// question within it is refused at once (Conflict).
	answersDedup = 24 * time.Hour
	// answerAckWait is how long an answer being applied stays with its
	// process without a sign of life (the process renews it every third of
	// it while the run resumes); then it goes to another process.
	answerAckWait = 30 * time.Second
	// answersMaxDeliver bounds the attempts at one answer (a store that
	// keeps failing); answersMaxConcurrent the runs resumed at once by one
	// process.
	answersMaxDeliver    = 20
	answersMaxConcurrent = 8
)

func (b *Bus) answersStream() string      { return b.stream + "_ANSWERS" }
func (b *Bus) answersSubject() string     { return b.subj.prefix + ".answers." }
func answersConsumer(agent string) string { return "answers_" + wire.Key(agent) }

// ensureAnswers creates the answers stream.
func (b *Bus) ensureAnswers(ctx context.Context) error {
	err := b.jetStreamAdmin(ctx, failure.Key{Source: failure.SourceBus, Name: "answers"}, "create answers stream", func(ctx context.Context) error {
		_, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: b.answersStream(), Description: "Switchboard answers to parked questions",
			Subjects: []string{b.answersSubject() + ">"}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, MaxAge: answersMaxAge, Duplicates: answersDedup,
			Replicas: b.cfg.Stream.Replicas, MaxMsgSize: 64 << 10,
		})
		return err
	})
	if err != nil {
		return b.wrap(err, "create answers stream", "the answers stream could not be created")
	}
	return nil
}

// Answer sends a person's answer to the parked question q (an entry of
// agent.Agent.Inbox, or of the store's PendingQuestions) from any process:
// it is kept in JetStream until a process serving q's agent (ServeAnswers)
// records it and resumes the run, even if none runs now or the servers
// restart meanwhile. A second answer to the same question is a Conflict.
func (b *Bus) Answer(ctx context.Context, q *agent.Question, answer agent.ElicitationResult) error {
	if q == nil || q.ID == "" || q.Agent == "" {
		return b.fail(failure.InvalidArgs, "answer", nil, "the question needs its id and agent")
	}
	switch answer.Action {
	case agent.ElicitAccept, agent.ElicitDecline, agent.ElicitCancel:
	default:
		return b.fail(failure.InvalidArgs, "answer", nil, fmt.Sprintf("the answer's action is %q; want accept, decline or cancel", answer.Action))
	}
	if err := b.ensureAnswers(ctx); err != nil {
		return err
	}
	data, err := json.Marshal(answerWire{V: version, Question: q.ID, Agent: q.Agent, Run: q.Run, Answer: answer})
	if err != nil {
		return b.fail(failure.InvalidArgs, "answer", err, "the answer could not be encoded")
	}
	subject := b.answersSubject() + wire.Key(q.Agent) + "." + wire.Key(q.ID)
	var ack *jetstream.PubAck
	err = b.pol().Execute(ctx, failure.Key{Source: failure.SourceBus, Name: "answers"}, func(ctx context.Context) (err error) {
		ack, err = b.js.Publish(ctx, subject, data, jetstream.WithMsgID(q.ID))
		return b.classifyConn(err, "answer")
	})
	if err != nil {
		return err
	}
	if ack.Duplicate {
		return b.fail(failure.Conflict, "answer", nil, fmt.Sprintf("question %q has an answer already", q.ID))
	}
	return nil
}

// answerServer applies the answers to one agent's parked questions in this
// process (ServeAnswers). Close it before closing the Bus.
type answerServer struct {
	b      *Bus
	a      *agent.Agent
	st     agent.Inbox
	name   string
	cc     jetstream.ConsumeContext
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

// ServeAnswers applies, in this process, the answers sent with Answer to
// the questions of a's parked runs: each is recorded in st (the inbox of
// a's Config.Durable) and its run resumes here (agent.Agent.Answer), up to
// 8 runs at once. Every process serving the same agent name shares the
// answers; one that dies while resuming a run hands the answer to another,
// which resumes the run from its checkpoint. ctx bounds the server's life.
// Close the returned server before closing the Bus: it stops taking answers
// and cancels the runs being resumed (their answers stay recorded; a
// cancelled run is resumable), waiting for them at most 5s.
func (b *Bus) ServeAnswers(ctx context.Context, a *agent.Agent, st agent.Inbox) (io.Closer, error) {
	if a == nil || st == nil || a.Name() == "" {
		return nil, b.fail(failure.Config, "serve answers", nil, "ServeAnswers needs a named agent and its inbox")
	}
	if err := b.ensureAnswers(ctx); err != nil {
		return nil, err
	}
	s := &answerServer{b: b, a: a, st: st, name: a.Name(), sem: make(chan struct{}, answersMaxConcurrent)}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	var cons jetstream.Consumer
	err := b.jetStreamAdmin(ctx, failure.Key{Source: failure.SourceBus, Name: "answers"}, "create answers consumer", func(ctx context.Context) (err error) {
		cons, err = b.js.CreateOrUpdateConsumer(ctx, b.answersStream(), jetstream.ConsumerConfig{
			Durable: answersConsumer(s.name), FilterSubject: b.answersSubject() + wire.Key(s.name) + ".>",
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: answerAckWait, MaxDeliver: answersMaxDeliver,
			MaxAckPending: 1000, BackOff: nil,
		})
		return err
	})
	if err != nil {
		s.cancel()
		return nil, b.wrap(err, "serve answers", "the answers consumer could not be created")
	}
	s.cc, err = cons.Consume(s.onMessage, jetstream.PullMaxMessages(answersMaxConcurrent))
	if err != nil {
		s.cancel()
		return nil, b.Classify(err, "serve answers")
	}
	context.AfterFunc(s.ctx, func() { s.cc.Stop() })
	return s, nil
}

// Close stops taking answers and cancels the runs being resumed (their
// answers stay recorded; a cancelled run is resumable), waiting for them
// at most 5s.
func (s *answerServer) Close() error {
	s.once.Do(func() {
		s.cc.Stop()
		s.cancel()
	})
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(stopGrace):
	}
	select {
	case <-done:
		return nil
	case <-time.After(stopGrace):
		err := s.b.fail(failure.Timeout, "stop answers", nil, fmt.Sprintf("a resumed run ignored cancellation for %s; it was abandoned", 2*stopGrace))
		s.b.pol().Handle(s.b.bg, err)
		return err
	}
}

// onMessage hands an answer to a goroutine of its own (bounded by sem: the
// consume loop waits while 8 runs resume).
func (s *answerServer) onMessage(m jetstream.Msg) {
	select {
	case s.sem <- struct{}{}:
	case <-s.ctx.Done():
		_ = m.Nak()
		return
	}
	s.wg.Add(1)
	go func() {
		defer func() { <-s.sem; s.wg.Done() }()
		s.apply(m)
	}()
}

// apply records one answer and resumes its run, telling JetStream the
// process is alive meanwhile; the answer is acknowledged once the run has
// resumed (to its end, its next park, or a failure), refused for good
// (Term) when it cannot apply, and retried later (Nak) when the store
// failed.
func (s *answerServer) apply(m jetstream.Msg) {
	w, err := decodeAnswer(m.Data())
	if err != nil {
		s.b.log.Warn().Err(err).Str("subject", m.Subject()).Msg("a malformed answer was dropped")
		_ = m.Term()
		return
	}
	stop := s.keepAlive(m)
	defer stop()
	log := s.b.log.With().Str("question", w.Question).Str("run", w.Run).Logger()
	_, err = s.a.Answer(s.ctx, w.Question, w.Answer)
	switch {
	case err == nil, errors.Is(err, failure.Parked):
	case errors.Is(err, failure.Conflict) && s.redelivered(m, w):
		// This process's predecessor recorded the answer and died while
		// the run resumed: resume it here.
		_, err = s.a.Resume(s.ctx, w.Run)
		log.Info().Err(err).Msg("answer applied before; its run resumed again")
	case errors.Is(err, failure.Timeout) && w.Run != "":
		// Too late: the run resumes with the question's Timeout.
		_, err = s.a.Resume(s.ctx, w.Run)
		log.Info().Err(err).Msg("the answer came after the question's deadline; the run resumed with a timeout")
	case s.ctx.Err() != nil:
		_ = m.Nak() // stopping: another process takes it
		return
	case errors.Is(err, failure.Conflict), errors.Is(err, failure.NotFound), errors.Is(err, failure.InvalidArgs):
		log.Warn().Err(err).Msg("the answer was not applied")
		_ = m.Term()
		return
	case failure.From(err).Retryable:
		log.Warn().Err(err).Msg("the answer could not be applied now; it is retried")
		_ = m.NakWithDelay(time.Second)
		return
	default:
		// The run resumed and failed: the answer is applied.
		log.Info().Err(err).Msg("the run resumed by an answer failed")
	}
	_ = m.Ack()
}

// decodeAnswer decodes an answer's payload: version 1, with a question
// id, an agent and one of the three actions.
func decodeAnswer(data []byte) (answerWire, error) {
	var w answerWire
	if err := json.Unmarshal(data, &w); err != nil {
		return answerWire{}, protocolError("decode answer", err)
	}
	if err := checkVersion("decode answer", w.V); err != nil {
		return answerWire{}, err
	}
	switch {
	case w.Question == "" || w.Agent == "":
		return answerWire{}, protocolError("decode answer", errors.New("the answer names no question or agent"))
	case w.Answer.Action != agent.ElicitAccept && w.Answer.Action != agent.ElicitDecline && w.Answer.Action != agent.ElicitCancel:
		return answerWire{}, protocolError("decode answer", fmt.Errorf("unknown action %q", w.Answer.Action))
	}
	return w, nil
}

// redelivered reports whether m is an answer this server's agent recorded
// before (delivered again after its process died), rather than a second
// answer to the question.
func (s *answerServer) redelivered(m jetstream.Msg, w answerWire) bool {
	if md, err := m.Metadata(); err != nil || md.NumDelivered < 2 {
		return false
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	q, err := s.st.LoadQuestion(ctx, w.Question)
	return err == nil && q.Answer != nil && reflect.DeepEqual(normalise(*q.Answer), normalise(w.Answer))
}

// normalise makes two answers comparable after a JSON round trip.
func normalise(r agent.ElicitationResult) agent.ElicitationResult {
	data, _ := json.Marshal(r)
	var out agent.ElicitationResult
	_ = json.Unmarshal(data, &out)
	return out
}

// keepAlive tells JetStream every third of the ack wait that the answer is
// still being applied, until the returned stop is called.
func (s *answerServer) keepAlive(m jetstream.Msg) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(answerAckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = m.InProgress()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
