package poll

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// exported is what an export of the simulated world would hold: its calls,
// metrics, users and teams, read from its lists.
type exported struct {
	calls   []events.Call
	metrics []events.CallMetric
	users   []events.User
	teams   []events.Team
}

func readExport(t *testing.T, p *Poller) exported {
	t.Helper()
	ctx, all := t.Context(), callcenter.ListOptions{PerPage: 1000}
	calls, err := p.api.ListCalls(ctx, callcenter.ListCallsOptions{ListOptions: all})
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := p.api.ListCallMetrics(ctx, callcenter.ListCallMetricsOptions{ListOptions: all, IncludeLifeCycle: true})
	if err != nil {
		t.Fatal(err)
	}
	users, err := p.api.ListUsers(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	teams, err := p.api.ListTeams(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	return exported{calls.Items, metrics.Items, users.Items, teams.Items}
}

// feed feeds x through a History of p as a backfill does (the calls committed
// before their metrics) and commits it with cursors.
func feed(t *testing.T, p *Poller, x exported, cursors map[string]string) *History {
	t.Helper()
	h, err := p.History(t.Context(), p.lease)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Calls(x.calls); err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := h.Metrics(x.metrics); err != nil {
		t.Fatal(err)
	}
	if err := h.Users(t.Context(), x.users); err != nil {
		t.Fatal(err)
	}
	if err := h.Teams(t.Context(), x.teams); err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(cursors); err != nil {
		t.Fatal(err)
	}
	return h
}

// historyWorld is a world of ended calls (the backlog) and a few live ones.
var historyWorld = sim.Config{Agents: 6, Teams: 2, CallRate: 2, Backlog: 30}

// TestHistoryAnnouncesOnce: records fed through History are announced like
// polled ones, marked as history, with the high water moved to the newest call;
// fed again they announce nothing; Done marks history as announced from its
// start; the live poller's cycles after it announce nothing again.
func TestHistoryAnnouncesOnce(t *testing.T) {
	p, store, s := newPollerOf(t, historyWorld, everything)
	s.Advance(20 * time.Minute)
	x := readExport(t, p)
	h := feed(t, p, x, map[string]string{CursorBackfill: `{"test":1}`})
	got := outboxTypes(t, store)
	st := s.Stats()
	if got["call.created"] != st.Calls || got["call.ended"] != st.CallsEnded || got["user.created"] != st.Users ||
		got["team.created"] != st.Teams || got["metric.finalized"] == 0 {
		t.Fatalf("events %v; the world %+v", got, st)
	}
	for _, e := range outboxEvents(t, store) {
		if !e.History {
			t.Fatalf("%s %s without the history attribute", e.Type, e.Subject)
		}
	}
	// Users and teams commit through batches of their own (diffAll).
	if n := sum(got) - got["user.created"] - got["team.created"]; h.Events() != n {
		t.Errorf("History.Events %d, outbox %d of calls and metrics", h.Events(), n)
	}
	cur, err := store.Cursors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	newest := x.calls[0].CreatedTime
	for _, c := range x.calls {
		newest = maxTime(newest, c.CreatedTime)
	}
	if hw := parseTime(cur[cursorHighWater]); !hw.Equal(newest) || cur[CursorBackfill] == "" {
		t.Errorf("high water %v, want %v; progress %q", hw, newest, cur[CursorBackfill])
	}
	since := s.Now().Add(-48 * time.Hour)
	if err := h.Done(since, map[string]string{CursorBackfill: ""}); err != nil {
		t.Fatal(err)
	}
	feed(t, p, x, nil)
	if again := outboxTypes(t, store); sum(again) != sum(got) {
		t.Errorf("fed again: %v, want nothing more than %v", again, got)
	}
	cur, _ = store.Cursors(t.Context())
	if a := parseTime(cur[cursorAnnounced]); !a.Equal(since) || cur[CursorBackfill] != "" {
		t.Errorf("announced from %v, want %v; progress %q", a, since, cur[CursorBackfill])
	}
	p.history = false // the live poller
	pollAll(t, p)
	if live := outboxTypes(t, store); live["call.created"] != got["call.created"] || live["user.created"] != got["user.created"] {
		t.Errorf("the live poller announced history again: %v, history %v", live, got)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestHistoryAbandonPutsHighWaterBack: a history that gives up puts the high
// water back (here: none), so the live poller's first read covers its Backfill
// span and finds every call, announced once.
func TestHistoryAbandonPutsHighWaterBack(t *testing.T) {
	p, store, s := newPollerOf(t, historyWorld, everything)
	s.Advance(20 * time.Minute)
	x := readExport(t, p)
	half := exported{calls: x.calls[len(x.calls)/2:]}
	h := feed(t, p, half, map[string]string{CursorBackfill: `{"test":1}`})
	if err := h.Abandon("", map[string]string{CursorBackfill: "", CursorBackfillIncomplete: `{"reason":"test"}`}); err != nil {
		t.Fatal(err)
	}
	cur, err := store.Cursors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cur[cursorHighWater] != "" || cur[CursorBackfill] != "" || cur[CursorBackfillIncomplete] == "" || cur[cursorAnnounced] != "" {
		t.Fatalf("cursors after Abandon: %v", cur)
	}
	p.history = false
	pollAll(t, p)
	got := outboxTypes(t, store)
	if st := s.Stats(); got["call.created"] != st.Calls {
		t.Errorf("%d calls created, the world has %d (the history fed %d)", got["call.created"], st.Calls, len(half.calls))
	}
}

// stream is the stream as Announced: the outbox entries a test says were
// published. Read hands all of them (the poller skips those Redis has).
type stream struct{ msgs []event.Committed }

func (s *stream) NewestOutboxID(context.Context) (string, error) {
	if len(s.msgs) == 0 {
		return "", nil
	}
	return s.msgs[len(s.msgs)-1].StreamID, nil
}

func (s *stream) Read(_ context.Context, _ time.Time, fn func(string, []byte) error) error {
	for _, m := range s.msgs {
		if err := fn(m.StreamID, m.Data); err != nil {
			return err
		}
	}
	return nil
}

// lossBed is a poller of the history world, 20 minutes in, checking a stream
// the test fills, on a Redis that can lose every key.
type lossBed struct {
	p     *Poller
	store *cursor.Store
	s     *sim.Sim
	st    *stream
	rdb   *redis.Client
}

func newLossBed(t *testing.T) *lossBed {
	t.Helper()
	lb := &lossBed{st: &stream{}, rdb: redistest.Start(t).Client(t)}
	store, err := cursor.New(lb.rdb, "acme")
	if err != nil {
		t.Fatal(err)
	}
	lb.store = store
	lb.p, lb.s = newPollerOn(t, store, historyWorld, everything, nil, WithAnnounced(lb.st))
	lb.s.Advance(20 * time.Minute)
	return lb
}

// loseEverything deletes every key, then takes the lease again for the poller.
func (lb *lossBed) loseEverything(t *testing.T) cursor.Lease {
	t.Helper()
	if err := lb.rdb.FlushAll(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	lease, err := lb.store.Acquire(t.Context(), "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	lb.p.lease = func() cursor.Lease { return lease }
	return lease
}

// published is the whole outbox, as published to the stream.
func published(t *testing.T, store *cursor.Store) []event.Committed {
	t.Helper()
	recs, err := store.ReadOutbox(t.Context(), "", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestHistoryReconcilesFirst: Redis loses every key after its events were
// published; the next term starts with a History (a backfill resumed before the
// live poller). It finds the stream ahead, rebuilds calls (with participants),
// metrics, users and teams from it in a new epoch, and announces nothing again
// when the same records are fed; the live poller's check then finds nothing.
func TestHistoryReconcilesFirst(t *testing.T) {
	lb := newLossBed(t)
	p, store, s, st := lb.p, lb.store, lb.s, lb.st
	for range 5 {
		s.Advance(time.Minute)
		pollAll(t, p)
	}
	st.msgs = published(t, store)
	before := outboxTypes(t, store)
	epoch := p.scope.Epoch
	lb.loseEverything(t)
	x := readExport(t, p)
	h := feed(t, p, x, nil)
	if p.Rollbacks() != 1 || p.scope.Epoch == epoch {
		t.Fatalf("rollbacks %d, epoch %s (was %s): the rollback went unnoticed", p.Rollbacks(), p.scope.Epoch, epoch)
	}
	if n := h.Events(); n != 0 {
		t.Errorf("history after the rebuild announced %d events again: %v", n, outboxTypes(t, store))
	}
	for kind, ids := range map[string][]int64{kindCall: {x.calls[0].ID}, kindMetric: metricIDs(x.metrics), kindUser: {x.users[0].ID}, kindTeam: {x.teams[0].ID}} {
		refs := make([]string, len(ids))
		for i, id := range ids {
			refs[i] = strconv.FormatInt(id, 10)
		}
		if m, err := store.GetSnapshots(t.Context(), kind, refs); err != nil || len(m) == 0 {
			t.Errorf("%s: no snapshot rebuilt (%v)", kind, err)
		}
	}
	p.history = false
	if err := p.reconcileState(t.Context()); err != nil || p.Rollbacks() != 1 {
		t.Errorf("the live poller's check after the rebuild: %v, %d rollbacks", err, p.Rollbacks())
	}
	s.Advance(time.Minute)
	pollAll(t, p)
	got := outboxTypes(t, store)
	if got["call.created"] > s.Stats().Calls-before["call.created"] {
		t.Errorf("after the rebuild: %v; %d calls new since the stream's last", got, s.Stats().Calls-before["call.created"])
	}
	if strings.Contains(strings.Join(keys(got), " "), "user.created") {
		t.Errorf("users announced again: %v", got)
	}
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func metricIDs(ms []events.CallMetric) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.CallID
	}
	return out
}

// aged is calls as they were d earlier.
func aged(calls []events.Call, d time.Duration) []events.Call {
	out := make([]events.Call, len(calls))
	for i, c := range calls {
		c.CreatedTime, c.UpdatedTime = c.CreatedTime.Add(-d), c.UpdatedTime.Add(-d)
		parts := make([]events.Participant, len(c.Participants))
		for j, p := range c.Participants {
			p.CreatedTime, p.UpdatedTime = p.CreatedTime.Add(-d), p.UpdatedTime.Add(-d)
			if p.EnqueuedTime != nil {
				at := p.EnqueuedTime.Add(-d)
				p.EnqueuedTime = &at
			}
			parts[j] = p
		}
		c.Participants = parts
		out[i] = c
	}
	return out
}

// TestRebuildKeepsTheHistoryOfABackfill: Redis loses what a backfill under way
// committed of calls 20 days old (older than anything the live reads return) and
// is left with the backfill's earlier checkpoint. The rebuild keeps those calls'
// snapshots, so the resumed backfill reading them again announces nothing twice.
func TestRebuildKeepsTheHistoryOfABackfill(t *testing.T) {
	lb := newLossBed(t)
	p, store, st := lb.p, lb.store, lb.st
	old := exported{calls: aged(readExport(t, p).calls, 20*24*time.Hour)}
	progress := map[string]string{CursorBackfill: `{"test":1}`}
	feed(t, p, old, progress)
	st.msgs = published(t, store)
	lease := lb.loseEverything(t)
	if _, err := store.Commit(t.Context(), lease, cursor.Batch{Cursors: progress}); err != nil {
		t.Fatal(err)
	}
	h := feed(t, p, old, nil)
	if p.Rollbacks() != 1 {
		t.Fatalf("rollbacks %d: the loss went unnoticed", p.Rollbacks())
	}
	if n := h.Events(); n != 0 {
		t.Errorf("the resumed backfill announced %d events again: %v", n, outboxTypes(t, store))
	}
	if open, err := store.OpenCalls(t.Context(), 0); err != nil || len(open) != 0 {
		t.Errorf("history calls tracked as open for the live reads: %v (%v)", open, err)
	}
}
