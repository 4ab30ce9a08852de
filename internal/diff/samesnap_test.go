package diff

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/callbus/callbus/events"
)

// A read that sameMetricSnap tells unchanged is one the full diff finds
// unchanged: no change, and the snapshot it writes is prev. Metrics with every
// field odd (see fill), read again as they were, with one field changed, or
// updated later.
func TestSameMetricSnapAsDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	overdue := CallState{Ended: true, Overdue: true}
	same := 0
	for range 3000 {
		var m0 events.CallMetric
		fill(t, r, reflect.ValueOf(&m0).Elem())
		first, err := Metric(Scope{Account: "acme"}, nil, m0, overdue)
		if err != nil || first.Snap == nil {
			continue // a time encoding/json cannot write: no event, no snapshot
		}
		m := m0
		switch r.IntN(4) {
		case 0:
			m.TalkTime++
		case 1:
			m.UpdatedTime = m.UpdatedTime.Add(1e9)
		case 2:
			m.Tags = nil
		}
		prev := first.Snap
		fast := sameMetricSnap(prev, m, metricFields(m, nil, nil))
		var s metricSnap
		if err := decodeMetricSnap(prev, &s); err != nil {
			t.Fatal(err)
		}
		ch := compare(s.F, metricFields(m, s.F, nil), false)
		s.Upd = ms(m.UpdatedTime)
		slow := len(ch) == 0 && bytes.Equal(encodeMetricSnap(&s, nil), prev)
		if fast != slow {
			t.Fatalf("metric %+v read again as %+v: sameMetricSnap %v, the diff finds unchanged %v", m0, m, fast, slow)
		}
		if fast {
			same++
		}
	}
	if same < 100 {
		t.Fatalf("only %d unchanged reads: the test does not exercise sameMetricSnap", same)
	}
}

// The tracked fields of calls and metrics with every field odd (see fill) come
// back from their binary form as they were, and with names outside the table.
func TestSnapshotFieldsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 3000 {
		var c events.Call
		var m events.CallMetric
		fill(t, r, reflect.ValueOf(&c).Elem())
		fill(t, r, reflect.ValueOf(&m).Elem())
		f := map[string]string{}
		compare(f, callFields(c, nil, nil), true)
		compare(f, metricFields(m, nil, nil), true)
		if i%3 == 0 {
			f["zz_other"], f["aa_other"] = `{"a":[1,2]}`, "-0.5"
		}
		rd := reader{b: appendFields(nil, f)}
		got := rd.fields()
		if rd.err != nil || len(rd.b) != 0 || !maps.Equal(got, f) {
			t.Fatalf("fields %v came back as %v (%v, %d bytes left)", f, got, rd.err, len(rd.b))
		}
	}
}
