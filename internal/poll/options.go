package poll

import (
	"context"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"go.opentelemetry.io/otel/trace"
)

// Option adds an optional collaborator to a Poller (functional options: the one
// way callbus passes optional collaborators, see ARCHITECTURE.md). Observers
// add up: each one given is called, in order. Observers run on Run's goroutine
// and must not block.
type Option func(*Poller)

// WithTracer traces poll cycles and commits (default: no traces).
func WithTracer(t trace.Tracer) Option {
	return func(p *Poller) {
		if t != nil {
			p.tracer = t
		}
	}
}

// WithWake is called after each commit that queued events (the relay's Wake).
func WithWake(wake func()) Option {
	return func(p *Poller) {
		if wake != nil {
			p.wake = wake
		}
	}
}

// CycleObserver sees each poll cycle: its resource, duration, the API requests it
// spent and its error (nil when it succeeded). ctx is the cycle's, with its span.
type CycleObserver func(ctx context.Context, resource string, d time.Duration, requests int, err error)

// WithCycleObserver adds an observer of poll cycles.
func WithCycleObserver(f CycleObserver) Option {
	return func(p *Poller) { p.cycleObservers = append(p.cycleObservers, f) }
}

// WithIntervalObserver adds an observer of the effective intervals, called each
// time they are recomputed (after every cycle). It must not keep the map.
func WithIntervalObserver(f func(ctx context.Context, effective map[string]time.Duration)) Option {
	return func(p *Poller) { p.intervalObservers = append(p.intervalObservers, f) }
}

// WithVersions sets the versions published beside each type's current one
// (event.Published by default): a test shows a second version of a type published
// side by side with the first.
func WithVersions(v map[events.Type][]event.Version) Option {
	return func(p *Poller) { p.versions = v }
}
