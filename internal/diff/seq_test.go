package diff

import (
	"encoding/json"
	"testing"
)

// Each event takes the entity's next sequence number, stored in its snapshot:
// a metric that is finalized, then updated twice, back to its first value, keeps
// the sequence of its three events, and each event's id is new.
func TestMetricSequence(t *testing.T) {
	ended := CallState{Ended: true, EndedAt: at(9)}
	var snap []byte
	ids := map[string]bool{}
	for i, m := range []struct{ upd, talk int }{{20, 9}, {40, 11}, {60, 9}} {
		r, err := Metric(Scope{Account: "acme", Epoch: "e1"}, snap, metric(m.upd, int64(m.talk)), ended)
		if err != nil || len(r.Events) != 1 {
			t.Fatalf("step %d: %v, %d events", i, err, len(r.Events))
		}
		if ids[r.Events[0].ID] {
			t.Fatalf("step %d: id %s again", i, r.Events[0].ID)
		}
		ids[r.Events[0].ID] = true
		snap = r.Snap
		js, err := SnapshotJSON("metric", snap)
		var s struct{ Q int64 }
		if err != nil || json.Unmarshal(js, &s) != nil || s.Q != int64(i+1) {
			t.Fatalf("step %d: snapshot %s (%v): sequence %d, want %d", i, js, err, s.Q, i+1)
		}
	}
}
