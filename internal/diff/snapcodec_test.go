package diff

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// callIDs runs the call diff over obs, switching the snapshot to the JSON of the
// previous release (json.Marshal of the same struct, as that release stored it)
// before observation jsonAt (-1: never), and returns every event id and the last
// snapshot.
func callIDs(t *testing.T, obs []events.Call, jsonAt int) ([]string, []byte) {
	t.Helper()
	var snap []byte
	var ids []string
	for i, c := range obs {
		if i == jsonAt && snap != nil {
			var s callSnap
			if err := decodeCallSnap(snap, &s); err != nil {
				t.Fatal(err)
			}
			snap, _ = json.Marshal(s)
		}
		r, err := Call(Scope{Account: "acme", Epoch: "e1"}, snap, c, c.UpdatedTime.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Events {
			ids = append(ids, e.ID)
		}
		snap = r.Snap
	}
	return ids, snap
}

// A state written by the previous release (JSON snapshots) survives the upgrade:
// whichever observation the new code starts at, it derives the same events with
// the same ids as if it had run all along, and an observation already applied
// gives no event at all.
func TestSnapshotUpgradeFromJSON(t *testing.T) {
	for _, obs := range schemaCalls() {
		want, _ := callIDs(t, obs, -1)
		for cut := range obs {
			if got, _ := callIDs(t, obs, cut); !slices.Equal(got, want) {
				t.Errorf("call %d, JSON before observation %d: ids %v, want %v", obs[0].ID, cut, got, want)
			}
		}
		_, last := callIDs(t, obs, -1)
		var s callSnap
		if err := decodeCallSnap(last, &s); err != nil {
			t.Fatal(err)
		}
		old, _ := json.Marshal(s)
		c := obs[len(obs)-1]
		r, err := Call(Scope{Account: "acme"}, old, c, c.UpdatedTime.Add(time.Minute))
		if err != nil || len(r.Events) != 0 {
			t.Errorf("call %d re-read on its JSON snapshot: %d events (%v)", c.ID, len(r.Events), err)
		}
		if st, err := CallStateOf(old); err != nil || st.Ended != (s.End != 0) {
			t.Errorf("CallStateOf(JSON) = %+v %v", st, err)
		}
	}
	// A snapshot exactly as the previous release wrote it.
	old := []byte(`{"q":4,"u":1763719230000,"e":1763719230000,"f":{"assigned_agent_id":"8","bill_duration":"0","call_notes":"\"callback tomorrow\"","recording":"null"},"p":{"10":{"s":1,"u":1763719230000},"11":{"s":1,"u":1763719230000,"g":true}}}`)
	var s callSnap
	if err := decodeCallSnap(old, &s); err != nil || s.Seq != 4 || s.End == 0 || !s.P["11"].Gone || s.F["call_notes"] != `"callback tomorrow"` {
		t.Fatalf("previous release's snapshot read as %+v %v", s, err)
	}
	var back callSnap
	if err := decodeCallSnap(encodeCallSnap(nil, &s, nil), &back); err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, s), mustJSON(t, back); a != b {
		t.Errorf("binary round trip: %s, want %s", b, a)
	}
	m := []byte(`{"q":1,"u":1763719260000,"f":{"cost":"0.25","csat":"{\"score\":5}","tags":"[]","talk_time":"25"}}`)
	var ms metricSnap
	if err := decodeMetricSnap(m, &ms); err != nil || ms.Seq != 1 || ms.F["csat"] != `{"score":5}` {
		t.Fatalf("previous release's metric snapshot read as %+v %v", ms, err)
	}
	var msBack metricSnap
	if err := decodeMetricSnap(encodeMetricSnap(&ms, nil), &msBack); err != nil || mustJSON(t, ms) != mustJSON(t, msBack) {
		t.Errorf("metric binary round trip: %+v %v", msBack, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every value form comes back byte for byte, and the binary form is much smaller
// than the JSON one.
func TestSnapshotValues(t *testing.T) {
	vals := []string{"null", `""`, "[]", "true", "false", "0", "-7", "9223372036854775807", "-9223372036854775808",
		"007", "1e3", "0.25", `"Ann"`, `"a\"b\u003c"`, `{"id":99,"url":"https://x/99"}`, `[1,2]`, `"`, ""}
	f := map[string]string{"other.field": `"x"`}
	for i, v := range vals {
		f[snapFieldNames[i%len(snapFieldNames)]+string(rune('a'+i))] = v // names outside the table
		f[snapFieldNames[i]] = v
	}
	s := callSnap{Seq: 9, Upd: 1763719230000, End: 1763719229000, F: f,
		P: map[string]partSnap{"-3": {S: -1, U: 0}, "12": {S: 8, U: 1763719231000, Gone: true}}}
	var back callSnap
	if err := decodeCallSnap(encodeCallSnap(nil, &s, nil), &back); err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, s), mustJSON(t, back); a != b {
		t.Errorf("round trip:\n got %s\nwant %s", b, a)
	}
	calls := schemaCalls()[0]
	_, bin := callIDs(t, calls, -1)
	var last callSnap
	if err := decodeCallSnap(bin, &last); err != nil {
		t.Fatal(err)
	}
	t.Logf("call snapshot: %d bytes binary, %d bytes JSON", len(bin), len(mustJSON(t, last)))
}

// Bad snapshots give errors, never a panic or a huge allocation.
func FuzzDecodeSnapshot(f *testing.F) {
	_, bin := callIDs(&testing.T{}, schemaCalls()[0], -1)
	f.Add(bin)
	f.Add([]byte{snapV1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte(`{"q":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s callSnap
		if decodeCallSnap(b, &s) == nil && len(b) > 0 && b[0] == snapV1 {
			var again callSnap
			if err := decodeCallSnap(encodeCallSnap(nil, &s, nil), &again); err != nil {
				t.Fatalf("re-encoded snapshot unreadable: %v", err)
			}
		}
		var m metricSnap
		_ = decodeMetricSnap(b, &m)
		_, _ = CallStateOf(b)
	})
}

// The tables fit their encodings: field presence is a bit of a uint64, object
// keys and known strings a byte.
func TestSnapshotTables(t *testing.T) {
	if len(snapFieldNames) > 64 || len(snapObjectKeys) >= otherField || len(snapKnownStrings) > 255 {
		t.Fatal("a table outgrew its encoding")
	}
	for _, v := range []string{"0.05", "0.0715", "-1.5", "12.25", "1.50", "-0.5", "1e3", "0.1234567890123456", `{"a":{"b":1}}`,
		`{"id":1,"url":"x\"y","z":0.5,"w":null}`, `{"id":1 }`, `{}`, `{"k":[1]}`, `{"id":-1,"time_unit":"seconds"}`,
		`[{"id":2,"name":"no response"},{"id":1,"name":"interested"}]`, `[{"id":1,"name":"a}b"}]`, `[{"a":1},2]`, `[{"a":[1]}]`, `[{}]`} {
		r := reader{b: appendValue(nil, v)}
		if got := r.value(); got != v || r.err != nil || len(r.b) != 0 {
			t.Errorf("value %s came back as %s (%v)", v, got, r.err)
		}
	}
}

// raw's shortcuts give what encoding/json gives.
func TestRawMatchesJSON(t *testing.T) {
	n := int64(-42)
	s := "Ann <a&b> \"q\" \\ é \u2028 \x01"
	for _, v := range []any{nil, int64(0), int64(-9), &n, (*int64)(nil), "", "plain text 123", s, &s, (*string)(nil), "a<b", "tab\t"} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := raw(v); got != string(want) {
			t.Errorf("raw(%#v) = %s, want %s", v, got, want)
		}
	}
	for _, v := range []string{"0", "-0", "007", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1.5", "-", "12a"} {
		n, err := strconv.ParseInt(v, 10, 64)
		want := err == nil && strconv.FormatInt(n, 10) == v
		if got := canonicalInt(v); got != want {
			t.Errorf("canonicalInt(%q) = %v, want %v", v, got, want)
		}
	}
}

// Every value comes back byte for byte from its binary form.
func FuzzSnapshotValue(f *testing.F) {
	for _, v := range []string{"null", "12", "0.05", `"seconds"`, `{"id":1,"url":"x"}`, `[{"id":2,"name":"a}b"},{"id":1}]`, `{"a":"\"}"}`} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := reader{b: appendValue(nil, v)}
		if got := r.value(); got != v || r.err != nil || len(r.b) != 0 {
			t.Fatalf("%q came back as %q (%v)", v, got, r.err)
		}
	})
}
