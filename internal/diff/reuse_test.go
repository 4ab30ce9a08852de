package diff

import (
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
