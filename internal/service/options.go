package service

import (
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/poll"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Option adds an optional collaborator to the service (functional options: the
// one way callbus passes optional collaborators, see ARCHITECTURE.md).
type Option func(*options)

type options struct {
	version     string
	onPublished func(event.Committed)
	poll        []poll.Option
	tp          trace.TracerProvider
	backfill    *BackfillOptions
	exportJobs  ExportJobs
	accounts    AccountSource
	redisAdvice zerolog.Level // the level of the Redis persistence advice
}

func newOptions(opts []Option) options {
	o := options{tp: noop.NewTracerProvider(), redisAdvice: zerolog.ErrorLevel}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithVersion names the build in the log and the API client's User-Agent.
func WithVersion(v string) Option { return func(o *options) { o.version = v } }

// WithRedisAdvice sets the level of the start-up advice about a Redis that keeps
// nothing on disk or whose settings cannot be read (error by default): the demo,
// whose Redis holds nothing worth keeping, gives it at info.
func WithRedisAdvice(level zerolog.Level) Option {
	return func(o *options) { o.redisAdvice = level }
}

// WithPublishObserver sees every event the relay got acknowledged (the demo's
// feed). f must not block.
func WithPublishObserver(f func(event.Committed)) Option {
	return func(o *options) { o.onPublished = f }
}

// WithPollOptions adds options to the poller, after the service's own (observers
// add up: tests watch cycles this way).
func WithPollOptions(opts ...poll.Option) Option {
	return func(o *options) { o.poll = append(o.poll, opts...) }
}

// WithTracerProvider traces poll cycles, API requests, Redis commits and
// publishes (default: no traces; see telemetry.NewTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) {
		if tp != nil {
			o.tp = tp
		}
	}
}

// WithBackfill makes Run backfill (poller backfill) instead of polling: it takes
// the lease (refusing when another process holds it), backfills, waits until the
// relay published every event, and returns.
func WithBackfill(b BackfillOptions) Option {
	return func(o *options) { o.backfill = &b }
}

// WithAccounts runs the service as a member of a fleet serving src's accounts
// (fleet mode; accounts_dir gives one too): the settings given to Run are the
// process's (Redis, NATS, HTTP, lease TTL), each account's come from src.
func WithAccounts(src AccountSource) Option {
	return func(o *options) { o.accounts = src }
}
