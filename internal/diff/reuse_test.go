package diff

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/testkit/cpumeter"
)

// copyEvents is evs with their data copied: what a Reuse's caller keeps.
func copyEvents(evs []events.Envelope) []events.Envelope {
	out := slices.Clone(evs)
	for i := range out {
		out[i].Data = slices.Clone(out[i].Data)
	}
	return out
}

// Diffs through one Reuse give what the diffs of their own give, each result
// read before the next diff: every sequence of the schema examples' calls and
// metrics, from no snapshot on, interleaved and under two accounts (the
// source follows the account).
func TestReuseIsOwnMemory(t *testing.T) {
	var r Reuse
	for _, account := range []string{"acme", "other"} {
		scope := Scope{Account: account, Epoch: "e1"}
		for _, seq := range schemaCalls() {
			var own, lent []byte
			for _, c := range seq {
				seen := c.UpdatedTime.Add(time.Second)
				want, werr := Call(scope, own, c, seen)
				got, gerr := r.Call(scope, lent, c, seen)
				got.Events = copyEvents(got.Events)
				if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
					t.Fatalf("call %d: through a Reuse %+v %v, own %+v %v", c.ID, got, gerr, want, werr)
				}
				own, lent = want.Snap, got.Snap
			}
		}
		for _, seq := range schemaMetrics() {
			var own, lent []byte
			for _, m := range seq {
				st := CallState{Ended: true, EndedAt: m.UpdatedTime.Add(-time.Minute)}
				want, werr := Metric(scope, own, m, st)
				got, gerr := r.Metric(scope, lent, m, st)
				got.Events = copyEvents(got.Events)
				if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
					t.Fatalf("metric of call %d: through a Reuse %+v %v, own %+v %v", m.CallID, got, gerr, want, werr)
				}
				own, lent = want.Snap, got.Snap
			}
		}
	}
}

// BenchmarkCallDiffReuse: BenchmarkCallDiff/new through a Reuse, as the poller
// diffs.
func BenchmarkCallDiffReuse(b *testing.B) {
	c := benchCall()
	seen := c.UpdatedTime.Add(time.Second)
	var r Reuse
	b.ReportAllocs()
	defer cpumeter.PerOp(b)()
	for b.Loop() {
		if _, err := r.Call(Scope{Account: "acme", Epoch: "e1"}, nil, c, seen); err != nil {
			b.Fatal(err)
		}
	}
}

// A call seen first when it has already ended: its call.ended carries the data
// json.Marshal writes for the call, as call.created does (emitCopy shares the
// bytes), and an id of its own.
func TestEndedAtFirstSightData(t *testing.T) {
	n := 0
	for _, seq := range schemaCalls() {
		for _, c := range seq {
			r, err := Call(Scope{Account: "acme", Epoch: "e1"}, nil, c, c.UpdatedTime.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(events.CallData{Call: c})
			if err != nil {
				t.Fatal(err)
			}
			var created events.Envelope
			for _, e := range r.Events {
				switch e.Type {
				case events.CallCreated:
					created = e
				case events.CallEnded:
					n++
					if string(e.Data) != string(want) || string(created.Data) != string(want) || e.ID == created.ID {
						t.Fatalf("call %d: ended %s (id %s), created %s (id %s), want both %s", c.ID, e.Data, e.ID, created.Data, created.ID, want)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no call of the examples ended at first sight")
	}
}
