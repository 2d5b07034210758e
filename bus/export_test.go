package bus

import "context"

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
