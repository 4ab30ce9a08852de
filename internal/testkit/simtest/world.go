package simtest

import (
	"bytes"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
)

// World is a simulator served over HTTP, recording its ground truth.
type World struct {
	Sim   *sim.Sim
	Clock *sim.ManualClock // the world's clock, unless the config brought its own
	Truth *Buffer          // the truth log (sim.Config.Truth) as written so far
	URL   string           // the API's base URL

	clockRunner // Run and Freeze, on a world with its own manual clock
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
	w.Sim, w.URL = s, serve(t, s.Handler())
	if w.Clock != nil {
		w.advance = s.Advance
	}
	return w
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
