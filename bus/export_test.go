package bus

import "context"

// PublishProgress publishes a progress report, for the external tests.
func PublishProgress(ctx context.Context, b *Bus, p progressUpdate) error {
	return b.publishProgress(ctx, p)
}

// ProgressPublisher is a publisher of one run's progress, for the benchmarks.
func ProgressPublisher(b *Bus, run string) func(context.Context, progressUpdate) error {
	return b.progressPublisher(run).publish
}

// NewSubjects is the subject scheme under prefix, for the external tests.
var NewSubjects = newSubjects

// Names the external tests use.
type (
	KVConfig       = kvConfig
	Entry[T any]   = kvEntry[T]
	ProgressUpdate = progressUpdate
)

// OpenKV opens a typed bucket, for the external tests.
func OpenKV[T any](ctx context.Context, b *Bus, cfg KVConfig) (*typedKV[T], error) {
	return openKV[T](ctx, b, cfg)
}
