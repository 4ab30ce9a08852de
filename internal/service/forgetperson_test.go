package service

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/redistest"
)

// poller forget removes a user's values from the user's snapshot and from the
// calls assigned to the user, no other's, under the lease, and counts the outbox
// entries that still hold them.
func TestForgetPerson(t *testing.T) {
	rs := redistest.Start(t)
	s := config.Settings{RedisURL: "redis://" + rs.Addr + "/0", LeaseTTL: 10 * time.Second, InstanceID: "test"}
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	scope := diff.Scope{Account: "acme", Epoch: "e1"}
	var b cursor.Batch
	yara := events.User{ID: 8, Name: "Yara Patel", Email: "yara.patel@acme.example", Phone: "+44 20 7946 0958", Role: "Agent"}
	for _, u := range []events.User{yara, {ID: 5, Name: "Ben Jensen", Email: "ben@acme.example", Role: "Agent"}} {
		r, err := diff.User(scope, nil, u, diff.StatusNames{}, t0)
		if err != nil {
			t.Fatal(err)
		}
		b.Snapshots = append(b.Snapshots, cursor.Snapshot{Kind: "user", ID: itoa(u.ID), Data: r.Snap})
		for _, e := range r.Events {
			m, err := event.Encode(e, "callcenter", "acme")
			if err != nil {
				t.Fatal(err)
			}
			b.Events = append(b.Events, m)
		}
	}
	for id, agent := range map[int64]int64{70: 8, 71: 8, 72: 5} {
		name := map[int64]string{8: yara.Name, 5: "Ben Jensen"}[agent]
		c := events.Call{ID: id, CreatedTime: t0, UpdatedTime: t0, AssignedAgentID: &agent, AssignedAgentName: &name,
			Participants: []events.Participant{{ID: id * 10, CallID: id, CallStatus: 8, CreatedTime: t0, UpdatedTime: t0}}}
		r, err := diff.Call(scope, nil, c, t0)
		if err != nil {
			t.Fatal(err)
		}
		b.Snapshots = append(b.Snapshots, cursor.Snapshot{Kind: "call", ID: itoa(id), Data: r.Snap})
	}
	lease, err := store.Acquire(t.Context(), "leader", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Commit(t.Context(), lease, b); err != nil {
		t.Fatal(err)
	}
	if _, err := ForgetPerson(t.Context(), s, "acme", nil, Person{UserID: 8}); !errors.Is(err, cursor.ErrNotLeader) {
		t.Fatalf("forget while a leader holds the lease: %v, want ErrNotLeader", err)
	}
	if err := store.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	rep, err := ForgetPerson(t.Context(), s, "acme", nil, Person{UserID: 8})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Snapshots != 3 || rep.Outbox != 1 {
		t.Errorf("report %+v, want 3 snapshots (the user, two calls) and 1 outbox entry (user.created)", rep)
	}
	for _, kind := range []string{"user", "call"} {
		for snap, err := range store.AllSnapshots(t.Context(), kind) {
			if err != nil {
				t.Fatal(err)
			}
			d := string(snap.Data)
			for _, v := range []string{"Yara", "yara.patel", "7946"} {
				if strings.Contains(d, v) {
					t.Errorf("%s %s still holds %q", kind, snap.ID, v)
				}
			}
			if snap.ID == "5" && !strings.Contains(d, "ben@acme.example") || snap.ID == "72" && !strings.Contains(d, "Ben Jensen") {
				t.Errorf("%s %s lost another person's values: %s", kind, snap.ID, d)
			}
		}
	}
	rep, err = ForgetPerson(t.Context(), s, "acme", nil, Person{Phone: "+44 20 7946 0958"})
	if err != nil || rep.Outbox != 1 || rep.Snapshots != 0 {
		t.Errorf("forget a phone: %+v, %v; want the one outbox entry holding it", rep, err)
	}
	if _, err := ForgetPerson(t.Context(), s, "acme", nil, Person{}); err == nil {
		t.Error("forget nobody: no error")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
