package callcenter_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
)

// TestSimCallsPaging reads the calls page by page with a small per_page.
func TestSimCallsPaging(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	all := allCalls(ctx, t, c, p)
	if n := e.sim.Stats().Calls; len(all) != n {
		t.Fatalf("%d calls listed, the world has %d", len(all), n)
	}
	const per = 7
	if len(all) < 3*per {
		t.Fatalf("only %d calls: want several pages of %d", len(all), per)
	}
	wantPages := (len(all) + per - 1) / per

	before := len(p.attempts())
	var got []int64
	pages := 0
	for pg, err := range c.CallsPages(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: per}}) {
		must(t, p, "calls pages", err)
		pages++
		if pg.Number != pages || pg.PerPage != per || pg.Meta == nil ||
			pg.Meta.TotalCount != len(all) || pg.Meta.TotalPages != wantPages || pg.Meta.Current != pages {
			t.Errorf("page %d: number %d, per %d, meta %+v", pages, pg.Number, pg.PerPage, pg.Meta)
		}
		if pages < wantPages && len(pg.Items) != per {
			t.Errorf("page %d holds %d calls, want %d", pages, len(pg.Items), per)
		}
		got = append(got, callIDs(pg.Items)...)
	}
	if pages != wantPages {
		t.Errorf("%d pages, want %d", pages, wantPages)
	}
	if !slices.Equal(got, callIDs(all)) {
		t.Errorf("paged ids %v\nwant %v", got, callIDs(all))
	}
	if sent := len(p.attempts()) - before; sent != wantPages {
		t.Errorf("%d requests for %d pages: the iterator should stop at meta.total_pages", sent, wantPages)
	}

	beyond, err := c.ListCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{Page: wantPages + 1, PerPage: per}})
	must(t, p, "list calls beyond the last page", err)
	if len(beyond.Items) != 0 || !beyond.IsLast() {
		t.Errorf("page %d: %d calls, want none", wantPages+1, len(beyond.Items))
	}
}

// TestSimCallsByTime lists calls in created_time windows: from inclusive, to
// exclusive, bounds in any zone, sub-second bounds widened to whole seconds.
func TestSimCallsByTime(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	all := allCalls(ctx, t, c, p)
	oldest := all[len(all)-1].CreatedTime

	tests := []struct {
		name     string
		from, to time.Time
		wantNone bool
	}{
		{name: "live quarter hour", from: simStart.Add(5 * time.Minute), to: simStart.Add(20 * time.Minute)},
		{name: "bounds with offsets", from: simStart.Add(10 * time.Minute).In(time.FixedZone("+0530", 5*3600+1800)), to: simStart.Add(25 * time.Minute).In(time.FixedZone("-0500", -5*3600))},
		{name: "sub-second bounds", from: simStart.Add(5*time.Minute + 400*time.Millisecond), to: simStart.Add(15*time.Minute + 600*time.Millisecond)},
		{name: "from the oldest call, inclusive", from: oldest, to: simStart},
		{name: "to at a call's time, exclusive", from: simStart, to: all[len(all)/4].CreatedTime},
		{name: "after the last call", from: simStart.Add(2 * time.Hour), to: simStart.Add(3 * time.Hour), wantNone: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The client widens the window to whole seconds; the server's to is exclusive.
			from := tc.from.Truncate(time.Second)
			to := tc.to.Truncate(time.Second)
			if !to.Equal(tc.to) {
				to = to.Add(time.Second)
			}
			var want []int64
			for _, call := range all {
				if !call.CreatedTime.Before(from) && call.CreatedTime.Before(to) {
					want = append(want, call.ID)
				}
			}
			if (len(want) == 0) != tc.wantNone {
				t.Fatalf("%d calls in the window: bad test data", len(want))
			}
			page, err := c.ListCalls(ctx, callcenter.ListCallsOptions{
				ListOptions: callcenter.ListOptions{PerPage: callcenter.MaxPerPage},
				ByTime:      callcenter.TimeWindow{From: tc.from, To: tc.to},
			})
			must(t, p, "list calls by time", err)
			if got := callIDs(page.Items); !slices.Equal(got, want) {
				t.Errorf("ids %v\nwant %v", got, want)
			}
			if page.Meta == nil || page.Meta.TotalCount != len(want) {
				t.Errorf("meta %+v: want total_count %d", page.Meta, len(want))
			}
			// Paging within the window reads the same calls.
			var paged []int64
			for call, err := range c.AllCalls(ctx, callcenter.ListCallsOptions{
				ListOptions: callcenter.ListOptions{PerPage: 3},
				ByTime:      callcenter.TimeWindow{From: tc.from, To: tc.to},
			}) {
				must(t, p, "all calls by time", err)
				paged = append(paged, call.ID)
			}
			if !slices.Equal(paged, want) {
				t.Errorf("paged ids %v\nwant %v", paged, want)
			}
		})
	}
}

// TestSimGetCall reads one call and compares it with the listed one.
func TestSimGetCall(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	listed := callWithRecording(t, allCalls(ctx, t, c, p))
	got, err := c.GetCall(ctx, listed.ID)
	must(t, p, "get call", err)
	if got.ID != listed.ID || got.Direction != listed.Direction || !got.CreatedTime.Equal(listed.CreatedTime) ||
		got.BillDuration != listed.BillDuration || len(got.Participants) != len(listed.Participants) ||
		got.Recording == nil || got.Recording.ID != listed.Recording.ID || len(got.Raw) == 0 {
		t.Errorf("get call %d: %+v\nlisted %+v", listed.ID, got, listed)
	}
	for _, part := range got.Participants {
		if part.CallID != got.ID {
			t.Errorf("participant %d of call %d has call_id %d", part.ID, got.ID, part.CallID)
		}
	}
}

// TestSimCallMetrics lists metrics in a window with and without include=life_cycle.
func TestSimCallMetrics(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	all := allCalls(ctx, t, c, p)
	window := callcenter.TimeWindow{From: simStart.Add(5 * time.Minute), To: simStart.Add(30 * time.Minute)}
	var want []int64
	for _, call := range all {
		if !call.CreatedTime.Before(window.From) && call.CreatedTime.Before(window.To) {
			want = append(want, call.ID)
		}
	}
	if len(want) == 0 {
		t.Fatal("no call in the window: bad test data")
	}

	for _, include := range []bool{true, false} {
		t.Run(fmt.Sprintf("include life_cycle %v", include), func(t *testing.T) {
			o := callcenter.ListCallMetricsOptions{ByTime: window, IncludeLifeCycle: include}
			o.PerPage = callcenter.MaxPerPage
			page, err := c.ListCallMetrics(ctx, o)
			must(t, p, "list call metrics", err)
			var got []int64
			withEvents := 0
			for _, m := range page.Items {
				got = append(got, m.CallID)
				if m.CreatedTime.Before(window.From) || !m.CreatedTime.Before(window.To) {
					t.Errorf("metric %d created %v, outside the window", m.ID, m.CreatedTime)
				}
				if hasKey := strings.Contains(string(m.Raw), `"life_cycle"`); hasKey != include || (m.LifeCycle != nil) != include {
					t.Errorf("metric %d: life_cycle in body %v, decoded %v; want both %v", m.ID, hasKey, m.LifeCycle != nil, include)
				}
				if len(m.LifeCycle) > 0 {
					withEvents++
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("metrics of calls %v\nwant %v", got, want)
			}
			if include && withEvents == 0 {
				t.Errorf("no metric in the window has life-cycle events: want finalized ones")
			}
		})
	}

	t.Run("half window refused before sending", func(t *testing.T) {
		before := len(p.attempts())
		_, err := c.ListCallMetrics(ctx, callcenter.ListCallMetricsOptions{ByTime: callcenter.TimeWindow{From: window.From}})
		var ve *callcenter.ValidationError
		if !errors.As(p.keep(err), &ve) {
			t.Errorf("err %v: want a *ValidationError", err)
		}
		if sent := len(p.attempts()) - before; sent != 0 {
			t.Errorf("%d requests sent, want none", sent)
		}
	})
}

// TestSimGetCallMetric reads the metric of a call whose metric is final.
func TestSimGetCallMetric(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	o := callcenter.ListCallMetricsOptions{IncludeLifeCycle: true}
	o.PerPage = callcenter.MaxPerPage
	page, err := c.ListCallMetrics(ctx, o)
	must(t, p, "list call metrics", err)
	var listed *events.CallMetric
	for i, m := range page.Items {
		if m.CreatedTime.After(simStart) && len(m.LifeCycle) > 0 && m.BillDuration != nil {
			listed = &page.Items[i]
			break
		}
	}
	if listed == nil {
		t.Fatal("no finalized metric of a live call")
	}
	got, err := c.GetCallMetric(ctx, listed.CallID)
	must(t, p, "get call metric", err)
	if got.ID != listed.ID || got.CallID != listed.CallID || !got.UpdatedTime.Equal(listed.UpdatedTime) ||
		got.TalkTime != listed.TalkTime || got.HoldDuration != listed.HoldDuration ||
		got.BillDuration == nil || *got.BillDuration != *listed.BillDuration || got.TalkTimeUnit != "seconds" {
		t.Errorf("get call metric of call %d: %+v\nlisted %+v", listed.CallID, got, *listed)
	}
	if got.LifeCycle != nil {
		t.Errorf("life_cycle %v without include", got.LifeCycle)
	}
}
