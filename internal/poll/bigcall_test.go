package poll

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/rs/zerolog"
)

// bigWorld is a busy world (a backlog of ended calls settling, calls coming in)
// whose first inbound call has legs monitoring legs besides its customer.
func bigWorld(legs int) sim.Config {
	return sim.Config{Agents: 12, CallRate: 4, Backlog: 300, Hostile: sim.Hostile{BigCall: true, BigCallLegs: legs}}
}

// joinedPerCall counts the participant.joined events of each call in evs.
func joinedPerCall(evs []events.Envelope) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		if e.Type == events.ParticipantJoined {
			out[e.Subject[:strings.Index(e.Subject, "/participants/")]]++
		}
	}
	return out
}

// biggest is the call with the most participant.joined events, and how many.
func biggest(evs []events.Envelope) (string, int) {
	call, most := "", 0
	for c, n := range joinedPerCall(evs) {
		if n > most {
			call, most = c, n
		}
	}
	return call, most
}

// A call with more participants than one commit takes items, seen first in a
// cycle that is busy with a backlog, gets all its events, in order (created,
// every participant joined, ended), in commits the store accepts; the cycles go
// on and every other call is announced too.
func TestBigCallInABusyCycle(t *testing.T) {
	const legs = 6000
	p, store, s := newPollerOf(t, bigWorld(legs), everything)
	stepWorld(t, p, s, 3) // fails at once when a commit is refused
	evs := outboxEvents(t, store)
	call, joined := biggest(evs)
	if joined <= legs {
		t.Fatalf("the big call %s: %d participant.joined, want its %d legs and more", call, joined, legs)
	}
	created, ended, lastJoined := -1, -1, -1 // positions in the outbox
	for i, e := range evs {
		switch {
		case e.Subject == call && e.Type == events.CallCreated:
			created = i
		case e.Subject == call && e.Type == events.CallEnded:
			ended = i
		case e.Type == events.ParticipantJoined && strings.HasPrefix(e.Subject, call+"/"):
			lastJoined = i
			if created < 0 {
				t.Fatalf("%s joined before its call was created", e.Subject)
			}
		}
	}
	if created < 0 || ended < lastJoined {
		t.Errorf("the big call: call.created at %d, last participant.joined at %d, call.ended at %d", created, lastJoined, ended)
	}
	stepWorld(t, p, s, 5) // the resource keeps going
	if got, st := outboxTypes(t, store), s.Stats(); got["call.created"] != st.Calls {
		t.Errorf("%d calls announced, the world has %d", got["call.created"], st.Calls)
	}
	seen := map[string]bool{}
	for _, e := range outboxEvents(t, store) {
		if seen[e.ID] {
			t.Errorf("event id %s repeated (%s %s)", e.ID, e.Type, e.Subject)
		}
		seen[e.ID] = true
	}
}

// Whatever a batch already holds, adding an entity never makes a commit over
// the store's limits: a batch nearly full of index moves and a 3,200-event
// entity are committed apart.
func TestEntityCommitsTheBatchFirst(t *testing.T) {
	p, store, _ := newTestPoller(t)
	rec := &commitSizes{Store: store}
	p.store = rec
	bt := p.newBatcher(t.Context())
	for i := range maxBatchItems - 1 {
		if err := bt.terminal(cursor.Tracked{ID: itoa(900000 + i), At: time.Unix(1, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	evs := make([]events.Envelope, 3200)
	for i := range evs {
		var err error
		if evs[i], err = event.New("acme", events.ParticipantJoined, "calls/1/participants/"+itoa(i), "1/"+itoa(i), time.Unix(2, 0), json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := bt.add(write{kind: kindCall, id: "1", snap: []byte("s"), events: evs}); err != nil {
		t.Fatal(err)
	}
	if err := bt.flush(); err != nil {
		t.Fatal(err)
	}
	for _, b := range rec.all() {
		if b.Items() > maxBatchItems && len(b.Snapshots) != 1 {
			t.Errorf("a commit of %d items (%d events) mixed the entity with others", b.Items(), len(b.Events))
		}
	}
	if got := outboxTypes(t, store)["participant.joined"]; got != len(evs) {
		t.Errorf("%d events committed, want %d", got, len(evs))
	}
}

// commitSizes records the batches committed through it.
type commitSizes struct {
	Store
	mu      sync.Mutex
	batches []cursor.Batch
}

func (c *commitSizes) Commit(ctx context.Context, l cursor.Lease, b cursor.Batch) (cursor.CommitResult, error) {
	res, err := c.Store.Commit(ctx, l, b)
	if err == nil {
		c.mu.Lock()
		c.batches = append(c.batches, b)
		c.mu.Unlock()
	}
	return res, err
}

func (c *commitSizes) all() []cursor.Batch {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.batches
}

// crashBeforeLastPart fails, as a process killed there would, the commit that
// holds the snapshot of a call whose events went out in an earlier commit (the
// last part of a call committed in parts), and every commit after it.
type crashBeforeLastPart struct {
	Store
	mu      sync.Mutex
	started map[string]bool // calls with events committed
	crashed bool
}

var errCrash = errors.New("killed between two parts of an entity")

func (c *crashBeforeLastPart) Commit(ctx context.Context, l cursor.Lease, b cursor.Batch) (cursor.CommitResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sn := range b.Snapshots {
		if sn.Kind == kindCall && c.started["calls/"+sn.ID] {
			c.crashed = true
		}
	}
	if c.crashed {
		return cursor.CommitResult{}, errCrash
	}
	for _, e := range b.Events {
		var env events.Envelope
		if e.Type == events.ParticipantJoined && json.Unmarshal(e.Data, &env) == nil {
			c.started[env.Subject[:strings.Index(env.Subject, "/participants/")]] = true
		}
	}
	return c.Store.Commit(ctx, l, b)
}

// A poller killed between two parts of a big call, restarted, reads the call
// again and commits it whole: its events come again under the same ids with the
// same bodies (the stream's duplicate window and consumers drop them), none is
// missing, and no id names two different events.
func TestCrashBetweenPartsDedupes(t *testing.T) {
	const legs = 6000
	p, store, s := newPollerOf(t, bigWorld(legs), everything)
	crash := &crashBeforeLastPart{Store: store, started: map[string]bool{}}
	p.store = crash
	s.Advance(time.Minute)
	if err := p.cycle(t.Context(), ResCalls); !errors.Is(err, errCrash) {
		t.Fatalf("the calls cycle: %v, want the crash between parts", err)
	}
	before := outboxEvents(t, store)
	call, joined := biggest(before)
	if joined == 0 || joined > legs {
		t.Fatalf("before the crash: %d of the big call's participants joined, want some, not all", joined)
	}
	// A new process on the same Redis and the same world (the killed one's
	// lease released, rather than waited out).
	if err := store.Release(t.Context(), p.lease()); err != nil {
		t.Fatal(err)
	}
	q, err := New(p.cfg, p.api, store, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	lease, err := store.Acquire(t.Context(), "test-2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	q.lease = func() cursor.Lease { return lease }
	if err := q.loadEpoch(t.Context()); err != nil {
		t.Fatal(err)
	}
	stepWorld(t, q, s, 2)
	after := outboxEvents(t, store)
	recs, err := store.ReadOutbox(t.Context(), "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{}
	for _, r := range recs {
		if prev, ok := bodies[r.ID]; ok && !bytes.Equal(prev, r.Data) {
			t.Errorf("id %s names two events:\n%.300s\n%.300s", r.ID, prev, r.Data)
		}
		bodies[r.ID] = r.Data
	}
	distinct := map[string]bool{}
	for _, e := range after {
		if e.Type == events.ParticipantJoined && strings.HasPrefix(e.Subject, call+"/") {
			distinct[e.ID] = true
		}
	}
	if len(distinct) <= legs {
		t.Errorf("%d distinct ids of the big call's participants, want its %d legs and more", len(distinct), legs)
	}
	if n := joinedPerCall(after)[call]; n != joined+len(distinct) {
		t.Errorf("%s: %d participant.joined in the outbox, want %d before the crash and all %d again", call, n, joined, len(distinct))
	}
	for _, e := range before {
		if _, ok := bodies[e.ID]; !ok {
			t.Errorf("%s %s committed before the crash is not among the events after", e.Type, e.ID)
		}
	}
	checkChains(t, after)
	if left, _ := store.GetSnapshots(t.Context(), kindParts, []string{strings.TrimPrefix(call, "calls/")}); len(left) != 0 {
		t.Errorf("the record of the call's parts is still stored")
	}
}

// checkChains fails unless every participant's status events chain, copies
// (same id) taken once: each status_changed's previous is the status the one
// before ended on, from participant.joined on.
func checkChains(t *testing.T, evs []events.Envelope) {
	t.Helper()
	type data struct {
		Participant struct {
			CallStatus int `json:"call_status"`
		} `json:"participant"`
		Previous struct{ Code int } `json:"previous"`
		Current  struct{ Code int } `json:"current"`
	}
	status, seen := map[string]int{}, map[string]bool{}
	for _, e := range evs {
		if seen[e.ID] || (e.Type != events.ParticipantJoined && e.Type != events.ParticipantStatusChanged) {
			continue
		}
		seen[e.ID] = true
		var d data
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if e.Type == events.ParticipantJoined {
			status[e.Subject] = d.Participant.CallStatus
			continue
		}
		if last, ok := status[e.Subject]; !ok || last != d.Previous.Code {
			t.Errorf("%s: status_changed from %d, the chain was at %d (known %v)", e.Subject, d.Previous.Code, last, ok)
		}
		status[e.Subject] = d.Current.Code
	}
}

// newPollerLimited is newPollerVia on a store that takes at most bytes a commit.
func newPollerLimited(t *testing.T, bytes int, cfg sim.Config, wrap func(http.Handler) http.Handler) (*Poller, *commitSizes, *sim.Sim) {
	t.Helper()
	store, err := cursor.New(redistest.Start(t).Client(t), "acme", cursor.WithMaxBatchBytes(bytes))
	if err != nil {
		t.Fatal(err)
	}
	p, s := newPollerOn(t, store, cfg, everything, wrap)
	rec := &commitSizes{Store: store}
	p.store = rec
	return p, rec, s
}

// The poller follows the store's limits, bytes as well as items: under a 3 MiB
// limit the big call (two events of over 1 MB each, 3,200 more) is committed in
// parts that each fit, and comes out whole.
func TestPartsFollowTheStoresByteLimit(t *testing.T) {
	const limit = 3 << 20
	p, rec, s := newPollerLimited(t, limit, bigWorld(3199), nil)
	stepWorld(t, p, s, 3)
	store := rec.Store.(*cursor.Store)
	if call, joined := biggest(outboxEvents(t, store)); joined < 3200 {
		t.Errorf("the big call %s: %d participant.joined, want its 3,199 legs and more", call, joined)
	}
	split := false
	for _, b := range rec.all() {
		if n := b.Bytes(); n > limit {
			t.Errorf("a commit of %d bytes, limit %d", n, limit)
		}
		split = split || slices.ContainsFunc(b.Snapshots, func(sn cursor.Snapshot) bool { return sn.Kind == kindParts })
	}
	if !split {
		t.Errorf("no call was committed in parts")
	}
	if got, st := outboxTypes(t, store), s.Stats(); got["call.created"] != st.Calls {
		t.Errorf("%d calls announced, the world has %d", got["call.created"], st.Calls)
	}
}

// An event larger than any commit of the store may be (a call whose notes
// alone are over the limit) cannot be committed: its call is skipped, with an
// error in the log, rather than stopping the calls resource; every other call
// is announced.
func TestEventOverACommitIsSkipped(t *testing.T) {
	var huge int64
	h := &hostile{edit: func(c map[string]any) {
		if huge == 0 {
			huge = callID(c)
		}
		if callID(c) == huge {
			c["call_notes"] = strings.Repeat("n", 100<<10)
		}
	}}
	p, rec, s := newPollerLimited(t, 64<<10, sim.Config{Agents: 8, CallRate: 4, Backlog: 20}, h.wrap)
	stepWorld(t, p, s, 5)
	evs := outboxEvents(t, rec.Store.(*cursor.Store))
	created := 0
	for _, e := range evs {
		if e.Subject == "calls/"+itoa(int(huge)) {
			t.Errorf("%s of the call over the limit committed", e.Type)
		}
		if e.Type == events.CallCreated {
			created++
		}
	}
	if st := s.Stats(); created != st.Calls-1 {
		t.Errorf("%d calls announced, want the world's %d but the one over the limit", created, st.Calls)
	}
}
