package callcenter

import (
	"github.com/callbus/callbus/events"
	"strings"
	"sync"
	"testing"
)

// One bad record never fails its page: it is left out, with its id, field and
// reason, and the rest of the page is served.
func TestDecodeListRejects(t *testing.T) {
	const good = `"created_time":"2024-03-05T10:00:00Z","updated_time":"2024-03-05T10:00:00Z"`
	part := func(extra string) string {
		return `"participants":[{"id":5,` + good + extra + `}]`
	}
	body := `{"calls":[` + strings.Join([]string{
		`{"id":1,` + good + `,` + part(``) + `}`,
		`{"id":2,` + good + `,` + part(`,"enqueued_time":"0000-00-00 00:00:00"`) + `}`,
		`{"id":"3",` + good + `,"bill_duration":{"s":1}}`,
		`{` + good + `}`,
		`{"id":5,"created_time":null,"updated_time":"2024-03-05T10:00:00Z"}`,
		`{"id":6,` + good + `,"participants":[{"id":7,"created_time":null,"updated_time":"2024-03-05T10:00:00Z"}]}`,
		`{"id":9,"created_time":"2024-03-05T10:00:00Z","updated_time":null,"participants":[{"id":10,"created_time":"2024-03-05T10:00:00Z","updated_time":null}]}`,
		`{"id":8,"created_time":"0000-01-01T00:00:00Z","updated_time":"2024-03-05T10:00:00Z"}`,
		`"not a call"`,
	}, ",") + `],"meta":{"total_count":9}}`
	for _, keepRaw := range []bool{true, false} { // without Raw, rejections still name their record
		checkRejects(t, body, keepRaw)
	}
}

func checkRejects(t *testing.T, body string, keepRaw bool) {
	t.Helper()
	env, err := decodeListRaw[events.Call]([]byte(body), "calls", keepRaw)
	if err != nil {
		t.Fatal(err)
	}
	// A call's null created_time and a null updated_time are tolerated (the
	// poller tracks the call from when it first saw it; the diff dates the
	// change otherwise).
	if len(env.items) != 3 || env.items[0].ID != 1 || env.items[1].ID != 5 || env.items[2].ID != 9 {
		t.Fatalf("%d items, want calls 1, 5 and 9 only", len(env.items))
	}
	want := []Rejection{
		{Resource: "calls", ID: 2, Field: "participants.enqueued_time", Reason: RejectBadTime},
		{Resource: "calls", ID: 3, Field: "bill_duration", Reason: RejectWrongType},
		{Resource: "calls", ID: 0, Field: "id", Reason: RejectMissingID},
		{Resource: "calls", ID: 6, Field: "participants.created_time", Reason: RejectNullTime},
		{Resource: "calls", ID: 8, Field: "created_time", Reason: RejectBadTime},
		{Resource: "calls", ID: 0, Field: "", Reason: RejectMalformed},
	}
	if len(env.rejected) != len(want) {
		t.Fatalf("rejected %+v, want %d", env.rejected, len(want))
	}
	for i, w := range want {
		got := env.rejected[i]
		if got.Detail == "" {
			t.Errorf("rejection %d has no detail", i)
		}
		got.Detail = ""
		if got != w {
			t.Errorf("Raw kept %v: rejection %d: got %+v want %+v", keepRaw, i, got, w)
		}
	}
}

// rejections collects what the rejection hook reports.
type rejections struct {
	mu  sync.Mutex
	got []Rejection
}

func (r *rejections) add(x Rejection) { r.mu.Lock(); r.got = append(r.got, x); r.mu.Unlock() }

func (r *rejections) ids() map[int64]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[int64]int{}
	for _, x := range r.got {
		m[x.ID]++
	}
	return m
}

// A poisoned call neither fails nor ends the window read early (a full page with
// a rejected record is still full), is reported to the hook, and is handed on once
// a later read serves it correctly.
func TestCallsSinceSkipsPoison(t *testing.T) {
	for _, tc := range []struct {
		order          string
		noMeta, ignore bool
	}{{"newest", false, false}, {"newest", true, false}, {"random", false, true}} {
		noMeta := tc.noMeta
		api := newListAPI(100, tc.order)
		api.noMeta, api.ignoreByTime = noMeta, tc.ignore
		api.poison = map[int64]bool{20: true, 41: true, 60: true}
		s := newServer(t, newFakeClock(), api.handle)
		var rej rejections
		cl := newTestClient(t, s, WithRejectionHook(rej.add))
		got := newCollect(t, 20)
		o := ListCallsOptions{ListOptions: ListOptions{PerPage: 20}, ByTime: TimeWindow{From: api.at(10), To: api.at(100)}}
		if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
			t.Fatal(err)
		}
		if len(got.got) != 87 {
			t.Errorf("%+v: %d calls handed, want 87", tc, len(got.got))
		}
		if n, _, _ := api.stats(); tc.ignore && n > 2*5+1 {
			t.Errorf("%+v: %d requests for two reads of 5 pages: rejected records made the list look incomplete", tc, n)
		}
		for id := range api.poison {
			if _, ok := got.got[id]; ok {
				t.Errorf("poisoned call %d handed on", id)
			}
			if rej.ids()[id] == 0 {
				t.Errorf("poisoned call %d not reported", id)
			}
		}
		// Served correctly later: picked up.
		api.mu.Lock()
		api.poison = nil
		api.mu.Unlock()
		got = newCollect(t, 20)
		if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
			t.Fatal(err)
		}
		got.wantRange(10, 100)
	}
}

// A page too large for the client is read again in smaller pieces: halves of the
// window, then smaller pages; never a permanent error.
func TestCallsSinceSplitsTooLargePages(t *testing.T) {
	api := newListAPI(60, "random")
	api.step = 0 // every call in the same second: only smaller pages help
	s := newServer(t, newFakeClock(), api.handle)
	cl := newTestClient(t, s, withMaxBody(1200))
	got := newCollect(t, 20)
	o := ListCallsOptions{ListOptions: ListOptions{PerPage: 20}, ByTime: TimeWindow{From: api.at(0), To: api.at(0).Add(10 * 60e9)}}
	if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
		t.Fatal(err)
	}
	got.wantRange(0, 60)

	api = newListAPI(60, "newest")
	s = newServer(t, newFakeClock(), api.handle)
	cl = newTestClient(t, s, withMaxBody(1200))
	got = newCollect(t, 20)
	o.ByTime = TimeWindow{From: api.at(0), To: api.at(60)}
	if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
		t.Fatal(err)
	}
	got.wantRange(0, 60)
}
