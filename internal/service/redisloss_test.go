package service

import (
	"testing"

	"github.com/callbus/callbus/internal/audit"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/natstest"
	"github.com/callbus/callbus/internal/redistest"
	"github.com/rs/zerolog"
)

// TestRedisDataLoss: a Redis without persistence restarts empty mid-run. The
// service recovers on its own, starts a new epoch, and what it then re-derives
// from scratch never reuses an earlier event's id (which consumers and JetStream
// would drop as a duplicate of a different event): delivery degrades to
// at-least-once, never to loss. The final states still match the world.
func TestRedisDataLoss(t *testing.T) {
	rs := redistest.StartPrivate(t) // restarted below
	ns := natstest.Start(t)
	w := newWorld(t, nil)
	svc := start(t, w, testSettings(w, ns.URL(), rs.URL, "loss-1"), zerolog.Nop())
	svc.advance(t, 40)
	rs.Restart(t) // all state lost
	svc.advance(t, 40)
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	caughtUp(t, svc.cycles, store)
	svc.stop(t)
	msgs, truth := readStream(t, ns), w.ReadTruth(t)
	// Ids are never reused, chains restart only where an entity is announced again,
	// every change of the world reaches the stream at least once, and the last
	// published states are the world's.
	r := audit.CheckDelivery(msgs, "callcenter", audit.AtLeastOnce)
	r.CompareTruth(truth)
	st := w.Sim.Stats()
	r.CompareCounts(st.Calls, st.CallsEnded, st.MetricsFinalized)
	for _, p := range r.Problems {
		t.Error(p)
	}
	again := 0
	for _, n := range r.Created {
		if n > 1 {
			again++ // announced again in the new epoch: expected
		}
	}
	if again == 0 {
		t.Errorf("no call was announced again: did the state really get lost? %v", r.ByType)
	}
	t.Logf("%d messages; %d calls announced again after the loss", r.Messages, again)
}
