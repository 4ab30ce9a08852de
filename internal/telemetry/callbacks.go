package telemetry

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/metric"
)

// callbacks hold the accounts' scrape-time callbacks of a process: one
// registration with the meter per kind (ObserveState's, ObservePoller's,
// ObserveBackfill's), which calls every account's callback of that kind. A
// registration of the SDK per account and kind kept its own maps of the
// instruments observed, some 2 KB each: 13 MB of a replica of 2,000 accounts,
// for the same few instruments each time. The instruments of a kind are the same
// for every account (the meter returns one instrument per name); each account's
// callback observes them with its account's label.
type callbacks struct {
	meter metric.Meter
	mu    sync.Mutex
	kinds map[string]*callbackKind
}

// callbackKind is one kind's accounts' callbacks, by the account's
// registrations.
type callbackKind struct {
	fs map[*registrations]metric.Callback
}

// add registers f, observing insts, as owner's callback of kind: kind's
// registration with the meter is made with its first callback; Stop on the
// account (owner.stop) removes f.
func (c *callbacks) add(kind string, owner *registrations, f metric.Callback, insts []metric.Observable) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.kinds[kind]
	if k == nil {
		k = &callbackKind{fs: map[*registrations]metric.Callback{}}
		if _, err := c.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
			return c.observe(ctx, k, o)
		}, insts...); err != nil {
			return err
		}
		c.kinds[kind] = k
	}
	k.fs[owner] = f
	owner.add(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(k.fs, owner)
	})
	return nil
}

// observe calls every callback of k, outside the lock (a callback may take its
// time: the state's reads Redis).
func (c *callbacks) observe(ctx context.Context, k *callbackKind, o metric.Observer) error {
	c.mu.Lock()
	fs := make([]metric.Callback, 0, len(k.fs))
	for _, f := range k.fs {
		fs = append(fs, f)
	}
	c.mu.Unlock()
	var errs []error
	for _, f := range fs {
		if err := f(ctx, o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
