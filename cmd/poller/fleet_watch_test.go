package main

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
)

// leaseWatch samples every account's lease (holder, fencing token) every 100 ms
// from Redis while a fleet test runs: the record from which failover times are
// measured and fencing is checked (a token never goes back, never has two
// holders).
type leaseWatch struct {
	b    *fleetBed
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	samples  map[string][]leaseSample
	problems []string
}

type leaseSample struct {
	at time.Time
	lease
}

// watchLeases starts sampling until the returned watch is stopped (at the end
// of the test at the latest).
func watchLeases(t *testing.T, b *fleetBed) *leaseWatch {
	w := &leaseWatch{b: b, stop: make(chan struct{}), done: make(chan struct{}), samples: map[string][]leaseSample{}}
	go w.run(t)
	t.Cleanup(w.halt)
	return w
}

func (w *leaseWatch) run(t *testing.T) {
	defer close(w.done)
	owners := map[string]map[int64]string{} // account → token → holder
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		for name, l := range w.b.holders(t) {
			if owners[name] == nil {
				owners[name] = map[int64]string{}
			}
			w.record(name, leaseSample{now, l}, owners[name])
		}
	}
}

// record appends one sample and checks it against the account's history.
func (w *leaseWatch) record(name string, s leaseSample, owner map[int64]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev := w.samples[name]
	if s.holder != "" {
		if h, seen := owner[s.token]; seen && h != s.holder {
			w.problem("%s: token %d held by %s and by %s: two leaders", name, s.token, h, s.holder)
		}
		owner[s.token] = s.holder
		for i := len(prev) - 1; i >= 0; i-- {
			if prev[i].holder != "" {
				if s.token < prev[i].token {
					w.problem("%s: fencing token went back from %d to %d", name, prev[i].token, s.token)
				}
				break
			}
		}
	}
	w.samples[name] = append(prev, s)
}

func (w *leaseWatch) problem(format string, args ...any) {
	if len(w.problems) < 50 {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

func (w *leaseWatch) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// Problems are the fencing violations seen.
func (w *leaseWatch) Problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.problems...)
}

// caughtUp waits until every account has a sample taken after now.
func (w *leaseWatch) caughtUp(t *testing.T) {
	t.Helper()
	now := time.Now()
	simtest.WaitFor(t, 30*time.Second, "the lease watch to catch up", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, name := range w.b.sim.Names() {
			ss := w.samples[name]
			if len(ss) == 0 || !ss[len(ss)-1].at.After(now) {
				return false
			}
		}
		return true
	})
}

// failover measures, for every account victim held at since, how long until
// another live holder had it; it returns the worst, the number of such accounts
// and those still not taken over.
func (w *leaseWatch) failover(victim string, since time.Time) (worst time.Duration, moved int, stuck []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, ss := range w.samples {
		held := false
		for _, s := range ss {
			if s.at.After(since) {
				break
			}
			held = instanceOf(s.holder) == victim
		}
		if !held {
			continue
		}
		moved++
		took := time.Duration(-1)
		for _, s := range ss {
			if s.at.After(since) && s.holder != "" && instanceOf(s.holder) != victim {
				took = s.at.Sub(since)
				break
			}
		}
		if took < 0 {
			stuck = append(stuck, name)
			continue
		}
		worst = max(worst, took)
	}
	return worst, moved, stuck
}

// longestVacancy is the longest time any account had no holder after it was
// first led.
func (w *leaseWatch) longestVacancy() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var worst time.Duration
	for _, ss := range w.samples {
		var from time.Time
		led := false
		for _, s := range ss {
			switch {
			case s.holder != "":
				if led && !from.IsZero() {
					worst = max(worst, s.at.Sub(from))
				}
				led, from = true, time.Time{}
			case led && from.IsZero():
				from = s.at
			}
		}
	}
	return worst
}
