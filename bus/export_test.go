package bus

import (
	"context"
	"io"

	"github.com/nats-io/nats.go/micro"

	"github.com/switchboard-dev/switchboard/agent"
)

// PublishProgress publishes a progress report, for the external tests.
func PublishProgress(ctx context.Context, b *Bus, p ProgressUpdate) error {
	return b.publishProgress(ctx, p)
}

// ProgressPublisher is a publisher of one run's progress, for the benchmarks.
func ProgressPublisher(b *Bus, run string) func(context.Context, ProgressUpdate) error {
	return b.progressPublisher(run).publish
}

// NewSubjects is the subject scheme under prefix, for the external tests.
var NewSubjects = newSubjects

// ServiceStats is the micro stats of a responder ServeSampling or
// ServeElicitation returned, for the external tests.
func ServiceStats(c io.Closer) micro.Stats { return c.(*busService).Stats() }

// SamplerUsed is the tokens a NewModelSampler sampler spent, for the
// external tests.
func SamplerUsed(s agent.Sampler) int { return s.(*modelSampler).spent() }

// SubjectsOf is b's subject scheme, for the external tests.
func SubjectsOf(b *Bus) subjects { return b.subj }

// DecodeAnswer is the answers' parser of outside input, for the fuzz
// tests.
func DecodeAnswer(data []byte) error { _, err := decodeAnswer(data); return err }
