package main

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/nats-io/nats.go/jetstream"
)

// settled waits until the consumer has nothing pending or unacknowledged and has
// acknowledged (or terminated) up to stream sequence last.
func (h *harness) settled(durable string, last uint64) {
	h.t.Helper()
	waitFor(h.t, 30*time.Second, fmt.Sprintf("consumer %s settled at %d", durable, last), func() bool {
		i := h.consumerInfo(durable)
		return i.NumPending == 0 && i.NumAckPending == 0 && i.AckFloor.Stream >= last
	})
}

func (h *harness) consumerInfo(durable string) *jetstream.ConsumerInfo {
	h.t.Helper()
	cons, err := h.js.Consumer(h.t.Context(), "CALLCENTER", durable)
	if err != nil {
		h.t.Fatal(err)
	}
	i, err := cons.Info(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	return i
}

// deadLetterMsgs returns the messages of the dead-letter stream.
func (h *harness) deadLetterMsgs() []*jetstream.RawStreamMsg {
	h.t.Helper()
	s, err := h.js.Stream(h.t.Context(), "CALLCENTER_DLQ")
	if err != nil {
		return nil
	}
	info, err := s.Info(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	var msgs []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		if m, err := s.GetMsg(h.t.Context(), seq); err == nil {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// appliedEntry is one entry of the store's applied stream.
type appliedEntry struct {
	seq    uint64
	entity string
	id     string
}

// applied reads durable's applied stream: every commit that changed the view, in
// commit order.
func (h *harness) applied(durable string) []appliedEntry {
	h.t.Helper()
	xs, err := h.rdb.XRange(h.t.Context(), "consumer-example:"+durable+":applied", "-", "+").Result()
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([]appliedEntry, len(xs))
	for i, x := range xs {
		seq, _ := strconv.ParseUint(fmt.Sprint(x.Values["seq"]), 10, 64)
		out[i] = appliedEntry{seq: seq, entity: fmt.Sprint(x.Values["entity"]), id: fmt.Sprint(x.Values["id"])}
	}
	return out
}

// audit checks durable's applied stream against what was published: no event
// applied twice; each entity's events applied in stream order; and none lost:
// every published event is applied or superseded by a later event of its entity
// that was applied. It returns how many were applied.
func (h *harness) audit(durable string) int {
	h.t.Helper()
	log := h.applied(durable)
	seen := map[string]bool{}
	last := map[string]uint64{} // entity → last applied sequence
	for _, a := range log {
		if seen[a.id] {
			h.t.Errorf("event %s (seq %d) applied twice", a.id, a.seq)
		}
		seen[a.id] = true
		if a.seq <= last[a.entity] {
			h.t.Errorf("entity %s: seq %d applied after %d", a.entity, a.seq, last[a.entity])
		}
		last[a.entity] = a.seq
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for seq, e := range h.published {
		if !seen[e.ID] && last[e.Subject] <= seq {
			h.t.Errorf("event %s (seq %d, %s %s) lost: neither applied nor superseded", e.ID, seq, e.Type, e.Subject)
		}
	}
	return len(log)
}

// Test events, built as the poller builds them.

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func mustEvent(t *testing.T, typ events.Type, entity, stateKey string, at time.Time, data any) events.Envelope {
	t.Helper()
	e, err := newEvent(typ, entity, stateKey, at, data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func user(id int64, status int) events.User {
	return events.User{ID: id, Name: fmt.Sprintf("Agent %d", id), Email: "a@example.com", Role: events.RoleAgent,
		Status: status, Preference: 1, TimeZone: "UTC", Teams: []events.TeamRef{}}
}

// userEvents are user id's created event then n-1 status changes, a second apart,
// the last to status n-1.
func userEvents(t *testing.T, id int64, n int) []events.Envelope {
	entity := fmt.Sprintf("users/%d", id)
	out := []events.Envelope{mustEvent(t, events.UserCreated, entity, "c", t0, events.UserData{User: user(id, 0)})}
	for i := 1; i < n; i++ {
		d := events.UserStatusData{User: user(id, i), Previous: events.UserState{Status: i - 1}, Current: events.UserState{Status: i, StatusName: fmt.Sprintf("S%d", i)},
			Changed: []string{"status"}}
		out = append(out, mustEvent(t, events.UserStatusChanged, entity, strconv.Itoa(i), t0.Add(time.Duration(i)*time.Second), d))
	}
	return out
}

// interleave publishes the users' event lists round-robin, so that one entity's
// events are spread among the others'. It returns the last sequence.
func (h *harness) interleave(lists [][]events.Envelope) uint64 {
	var last uint64
	for i := 0; ; i++ {
		sent := false
		for _, l := range lists {
			if i < len(l) {
				last, sent = h.publish(l[i], ""), true
			}
		}
		if !sent {
			return last
		}
	}
}

// wantAgents checks that snap holds the agents 1..n with status last.
func wantAgents(t *testing.T, snap snapshot, n, last int) {
	t.Helper()
	if len(snap.Agents) != n {
		t.Fatalf("/state has %d agents, want %d", len(snap.Agents), n)
	}
	for i, a := range snap.Agents {
		if a.ID != int64(i+1) || a.Status != last || a.StatusName != fmt.Sprintf("S%d", last) {
			t.Errorf("agent %d: %+v, want status S%d", i+1, a, last)
		}
	}
	if !slices.IsSortedFunc(snap.Agents, func(a, b agent) int { return int(a.ID - b.ID) }) {
		t.Errorf("agents not sorted")
	}
}
