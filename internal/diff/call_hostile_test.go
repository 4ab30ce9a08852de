package diff

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// nullPart is a participant whose updated_time is null.
func nullPart(id int64, status int) events.Participant {
	p := part(id, status, 0)
	p.UpdatedTime = time.Time{}
	return p
}

// statusPairs lists the participant.status_changed events as previous→current.
func statusPairs(t *testing.T, evs []events.Envelope) [][2]int {
	t.Helper()
	var out [][2]int
	for _, e := range evs {
		if e.Type != events.ParticipantStatusChanged {
			continue
		}
		var d events.ParticipantStatusData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]int{d.Previous.Code, d.Current.Code})
	}
	return out
}

func count(evs []events.Envelope, typ events.Type) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// A participant or a call without updated_time ends the call once, dated by the
// call's updated_time or else the time of the read; never the year 1, never again.
func TestCallNullTimesEndOnce(t *testing.T) {
	nullCall := call(0, nullPart(10, 1))
	nullCall.UpdatedTime = time.Time{}
	for _, tc := range []struct {
		name string
		obs  []events.Call
		want time.Time
	}{
		{"participant time null", []events.Call{call(0, part(10, 8, 0)), call(9, nullPart(10, 1)), call(9, nullPart(10, 1)), call(12, nullPart(10, 1))}, at(9)},
		{"every time null", []events.Call{call(0, part(10, 8, 0)), nullCall, nullCall, nullCall}, at(901)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, _, st := apply(t, tc.obs...)
			var ended []events.Envelope
			for _, e := range evs {
				if e.Time.Year() < 2000 {
					t.Errorf("%s dated %s", e.Type, e.Time)
				}
				if e.Type == events.CallEnded {
					ended = append(ended, e)
				}
			}
			if len(ended) != 1 || !ended[0].Time.Equal(tc.want) || !st.EndedAt.Equal(tc.want) {
				t.Fatalf("call.ended %d times (%v), state %+v; want once at %s", len(ended), types(evs), st, tc.want)
			}
		})
	}
}

// A participant a newer copy of the call no longer lists does not hold the call
// open; a copy with the same updated_time that omits it proves nothing.
func TestCallVanishedParticipant(t *testing.T) {
	two := call(0, part(10, 8, 0), part(11, 8, 0))
	for _, tc := range []struct {
		name  string
		obs   []events.Call
		ended int
	}{
		{"newer copy without it: ends", []events.Call{two, call(5, part(10, 1, 5))}, 1},
		{"same updated_time without it: open", []events.Call{two, call(0, part(10, 1, 0))}, 0},
		{"listed again: holds the call open again", []events.Call{two, call(5, part(10, 8, 5)), call(6, part(10, 1, 6), part(11, 8, 0))}, 0},
		{"listed again, terminal: ends", []events.Call{two, call(5, part(10, 8, 5)), call(6, part(10, 1, 6), part(11, 1, 6))}, 1},
		{"every participant gone: open", []events.Call{two, call(5)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, _, st := apply(t, tc.obs...)
			if n := count(evs, events.CallEnded); n != tc.ended || st.Ended != (tc.ended == 1) {
				t.Fatalf("%d call.ended, state %+v; want %d (%v)", n, st, tc.ended, types(evs))
			}
		})
	}
}

// The equal-time rule: a copy with the same updated_time as the snapshot moves a
// status only forward (queued, connecting, live, terminal), so a stale replica's
// copy never produces a change back; a newer copy moves it anywhere.
func TestCallStaleCopyAtEqualTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		obs  []events.Call
		want [][2]int
	}{
		{"stale hold/talk copies, then the real change", []events.Call{
			call(0, part(10, 8, 0)), call(5, part(10, 12, 5)), call(5, part(10, 8, 5)),
			call(5, part(10, 12, 5)), call(5, part(10, 8, 5)), call(9, part(10, 8, 9)),
		}, [][2]int{{8, 12}, {12, 8}}},
		{"forward at equal time", []events.Call{
			call(0, part(10, 6, 0)), call(0, part(10, 13, 0)), call(0, part(10, 8, 0)), call(0, part(10, 1, 0)),
		}, [][2]int{{6, 13}, {13, 8}, {8, 1}}},
		{"terminal never goes back at equal time", []events.Call{
			call(0, part(10, 8, 0)), call(3, part(10, 1, 3)), call(3, part(10, 8, 3)), call(3, part(10, 3, 3)),
		}, [][2]int{{8, 1}}},
		{"null time is an equal time", []events.Call{
			call(0, part(10, 12, 0)), call(0, nullPart(10, 8)), call(0, nullPart(10, 5)),
		}, [][2]int{{12, 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, _, _ := apply(t, tc.obs...)
			if got := statusPairs(t, evs); !slices.Equal(got, tc.want) {
				t.Fatalf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

// Tracked fields at an equal updated_time: only a gain (an empty field taking a
// value) counts, so a stale copy never reverts a field nor flips it back.
func TestCallFieldsAtEqualTime(t *testing.T) {
	base := call(5, part(10, 1, 5))
	base.CallNotes = "first"
	recorded := base
	recorded.Recording = &events.Recording{ID: 99, URL: "u", Duration: 30}
	noted := recorded
	noted.CallNotes = "stale notes"
	evs, _, _ := apply(t, base, recorded, base, recorded, noted)
	if got := types(evs); !slices.Equal(got, []events.Type{events.CallCreated, events.ParticipantJoined, events.CallEnded, events.CallUpdated}) {
		t.Fatalf("got %v; want one call.updated (the recording)", got)
	}
}

// bill_duration, which ticks while the call is live, changes quietly while it is
// open; call.ended carries its final value; a later change gives one call.updated.
func TestCallQuietBillDuration(t *testing.T) {
	billed := func(upd int, bill int64, parts ...events.Participant) events.Call {
		c := call(upd, parts...)
		c.BillDuration = bill
		return c
	}
	evs, snap, _ := apply(t,
		billed(0, 0, part(10, 8, 0)), billed(1, 1, part(10, 8, 0)), billed(2, 2, part(10, 8, 0)),
		billed(3, 3, part(10, 1, 3)), billed(4, 3, part(10, 1, 3)), billed(9, 4, part(10, 1, 3)), billed(10, 4, part(10, 1, 3)),
	)
	want := []events.Type{events.CallCreated, events.ParticipantJoined, events.ParticipantStatusChanged, events.CallEnded, events.CallUpdated}
	if got := types(evs); !slices.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	var ended events.CallData
	var updated events.CallUpdatedData
	if err := json.Unmarshal(evs[3].Data, &ended); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(evs[4].Data, &updated); err != nil {
		t.Fatal(err)
	}
	if ended.Call.BillDuration != 3 || len(updated.Changes) != 1 || string(updated.Changes[0].Previous) != "3" || string(updated.Changes[0].Current) != "4" {
		t.Fatalf("call.ended bill %d, call.updated %+v; want 3, then 3→4", ended.Call.BillDuration, updated.Changes)
	}
	// A live call's ticking field costs no snapshot write.
	r, err := Call(Scope{Account: "acme"}, nil, billed(0, 0, part(10, 8, 0)), at(1))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Call(Scope{Account: "acme"}, r.Snap, billed(0, 7, part(10, 8, 0)), at(2))
	if err != nil || r2.Changed {
		t.Fatalf("a live call's bill_duration ticking: changed %v (%v), want no write", r2.Changed, err)
	}
	_ = snap
}

// A call without created_time is announced when first seen, dated by that read
// (not by its updated_time, nor the year 1); read again from no snapshot at a
// later time, as after a crash before its commit, it gets the same ids, so the
// copies dedupe; later reads go on from its snapshot as for any call.
func TestCallNullCreatedTime(t *testing.T) {
	c := call(30, part(10, 8, 30))
	c.CreatedTime = time.Time{}
	first, second := at(60), at(95)
	a, snap, err := callOnce(c, nil, first)
	if err != nil {
		t.Fatal(err)
	}
	if got := types(a); !slices.Equal(got, []events.Type{events.CallCreated, events.ParticipantJoined}) {
		t.Fatalf("events %v, want call.created and participant.joined", got)
	}
	if !a[0].Time.Equal(first) {
		t.Errorf("call.created dated %s, want the read that first saw it, %s", a[0].Time, first)
	}
	b, _, err := callOnce(c, nil, second)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Errorf("%s: id %s, read again %s", a[i].Type, a[i].ID, b[i].ID)
		}
	}
	ended := call(40, part(10, 1, 40))
	ended.CreatedTime = time.Time{}
	evs, _, err := callOnce(ended, snap, at(120))
	if err != nil {
		t.Fatal(err)
	}
	if got := types(evs); !slices.Equal(got, []events.Type{events.ParticipantStatusChanged, events.CallEnded}) {
		t.Errorf("after the first sight: %v, want the status change and call.ended", got)
	}
}

// callOnce diffs c against prev, read at seen.
func callOnce(c events.Call, prev []byte, seen time.Time) ([]events.Envelope, []byte, error) {
	r, err := Call(Scope{Account: "acme", Epoch: "e1"}, prev, c, seen)
	return r.Events, r.Snap, err
}
