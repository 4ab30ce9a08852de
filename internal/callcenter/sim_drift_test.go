package callcenter_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/sim"
)

// TestSimDrift reads users, calls and metrics from a server that uses every drift
// variant and an offset on every record: all decode, directions are lower case and
// every time is UTC.
func TestSimDrift(t *testing.T) {
	e := newSimEnv(t, sim.Config{Backlog: 40, Drift: 1, OffsetRate: 1})
	e.sim.Advance(30 * time.Minute)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	utc := func(what string, tm time.Time) {
		t.Helper()
		if tm.Location() != time.UTC {
			t.Errorf("%s %v is not in UTC", what, tm)
		}
	}
	stats := e.sim.Stats()

	var users []events.User
	for u, err := range c.AllUsers(ctx, callcenter.ListOptions{PerPage: 6}) {
		must(t, p, "all users", err)
		users = append(users, u)
	}
	if len(users) != stats.Users {
		t.Errorf("%d users, want %d", len(users), stats.Users)
	}
	for _, u := range users {
		if u.ID <= 0 || u.Role == "" {
			t.Errorf("user %+v", u)
		}
		for _, tm := range []*time.Time{u.LastCallTime, u.LastSeenTime} {
			if tm != nil {
				utc(fmt.Sprintf("user %d time", u.ID), *tm)
			}
		}
	}

	var calls []events.Call
	raw := ""
	for call, err := range c.AllCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: 7}}) {
		must(t, p, "all calls", err)
		calls = append(calls, call)
		raw += string(call.Raw)
	}
	if ids := sorted(callIDs(calls)); len(ids) != stats.Calls || len(slices.Compact(ids)) != stats.Calls {
		t.Errorf("%d calls (%d distinct), want %d", len(calls), len(slices.Compact(sorted(callIDs(calls)))), stats.Calls)
	}
	for _, call := range calls {
		if call.ID <= 0 || (call.Direction != events.DirectionIncoming && call.Direction != events.DirectionOutgoing) {
			t.Errorf("call %d direction %q", call.ID, call.Direction)
		}
		utc(fmt.Sprintf("call %d created", call.ID), call.CreatedTime)
		utc(fmt.Sprintf("call %d updated", call.ID), call.UpdatedTime)
		for _, part := range call.Participants {
			if part.CallID != call.ID {
				t.Errorf("participant %d of call %d: call_id %d", part.ID, call.ID, part.CallID)
			}
			utc(fmt.Sprintf("participant %d created", part.ID), part.CreatedTime)
			utc(fmt.Sprintf("participant %d updated", part.ID), part.UpdatedTime)
			if part.EnqueuedTime != nil {
				utc(fmt.Sprintf("participant %d enqueued", part.ID), *part.EnqueuedTime)
			}
		}
	}
	// The variants were really served.
	for _, want := range []string{`"id":"`, `"direction":"Incoming"`, `+05:30"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("no call body holds %s: drift not exercised", want)
		}
	}

	metrics, events := 0, 0
	o := callcenter.ListCallMetricsOptions{IncludeLifeCycle: true}
	o.PerPage = 9
	for m, err := range c.AllCallMetrics(ctx, o) {
		must(t, p, "all call metrics", err)
		metrics++
		utc(fmt.Sprintf("metric %d created", m.ID), m.CreatedTime)
		utc(fmt.Sprintf("metric %d updated", m.ID), m.UpdatedTime)
		for _, ev := range m.LifeCycle {
			events++
			if ev.Timestamp.IsZero() {
				t.Errorf("metric %d: event %q without a time", m.ID, ev.Type)
			}
			utc(fmt.Sprintf("metric %d event %s", m.ID, ev.Type), ev.Timestamp)
		}
	}
	if metrics != stats.Calls || events == 0 {
		t.Errorf("%d metrics with %d life-cycle events, want %d metrics and some events", metrics, events, stats.Calls)
	}
}
