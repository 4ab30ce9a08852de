package simtest

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/audit"
	"github.com/callbus/callbus/internal/sim"
)

// World is a simulator served over HTTP, recording its ground truth.
type World struct {
	Sim   *sim.Sim
	Clock *sim.ManualClock // the world's clock, unless the config brought its own
	Truth *Buffer          // the truth log (sim.Config.Truth) as written so far
	URL   string           // the API's base URL

	run clockRunner
}

// NewWorld starts a simulator from cfg, with Truth set to the world's buffer and,
// when cfg has no clock, a manual one at the current second that only Sim.Advance
// (or Run) moves. The HTTP server closes when the test ends.
func NewWorld(t testing.TB, cfg sim.Config) *World {
	t.Helper()
	w := &World{Truth: &Buffer{}}
	if cfg.Clock == nil {
		w.Clock = sim.NewManualClock(time.Now().UTC().Truncate(time.Second))
		cfg.Clock = w.Clock
	}
	cfg.Truth = w.Truth
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	w.Sim = s
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}

// Run moves the world's manual clock by speed × the real time elapsed, in 20 ms
// steps, until Freeze (called at the end of the test at the latest). Call it at
// most once, and only on a world with its own manual clock.
func (w *World) Run(t testing.TB, speed float64) {
	if w.Clock == nil {
		t.Fatal("simtest: Run on a world whose clock is not its own")
	}
	w.run.start(t, speed, w.Sim.Advance)
}

// Freeze stops the clock Run moves, and returns once it no longer moves. It is
// idempotent, and does nothing for a world that is not running.
func (w *World) Freeze() { w.run.freeze() }

// clockRunner advances a clock in steps from a goroutine until frozen.
type clockRunner struct {
	stop chan struct{}
	done chan struct{}
}

func (r *clockRunner) start(t testing.TB, speed float64, advance func(time.Duration)) {
	const step = 20 * time.Millisecond
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		tick := time.NewTicker(step)
		defer tick.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-tick.C:
				advance(time.Duration(speed * float64(step)))
			}
		}
	}()
	t.Cleanup(r.freeze)
}

func (r *clockRunner) freeze() {
	if r.stop == nil {
		return
	}
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}

// ReadTruth runs the world up to its clock, flushes its truth log and parses it.
// The simulator keeps serving.
func (w *World) ReadTruth(t testing.TB) *audit.Truth {
	t.Helper()
	if err := w.Sim.Close(); err != nil {
		t.Fatalf("sim close: %v", err)
	}
	truth, err := audit.ReadTruth(bytes.NewReader(w.Truth.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	truth.Hide(w.Sim.HiddenParticipants()...)
	return truth
}
