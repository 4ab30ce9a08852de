package service

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/audit"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/natstest"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/redistest"
	"github.com/rs/zerolog"
)

// TestRedisDataLoss: a Redis without persistence restarts empty mid-run. The
// service recovers on its own, starts a new epoch, and what it then re-derives
// from scratch never reuses an earlier event's id (which consumers and JetStream
// would drop as a duplicate of a different event): delivery degrades to
// at-least-once, never to loss. The final states still match the world.
func TestRedisDataLoss(t *testing.T) {
	rs := redistest.StartPrivate(t) // restarted below
	ns := natstest.Start(t)
	w := newWorld(t, nil)
	c := &cycles{n: map[string]int{}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, testSettings(w, ns.URL(), rs.URL, "loss-1"), zerolog.Nop(), Options{PollHooks: poll.Hooks{Cycle: c.hook}})
	}()
	advance := func(steps int) {
		for range steps {
			n := c.snapshot()[poll.ResCalls]
			waitFor(t, 60*time.Second, "a calls cycle", func() bool { return c.snapshot()[poll.ResCalls] > n })
			w.sim.Advance(10 * time.Second)
		}
	}
	advance(40)
	rs.Restart(t) // all state lost
	advance(40)
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	caughtUp(t, c, store)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	msgs, truth := readRun(t, ns, w)
	r := audit.Check(msgs, "callcenter")
	again := 0
	for _, p := range r.Problems {
		switch {
		case strings.Contains(p, "already published"):
			t.Errorf("an event id was reused after the loss: %s", p)
		case strings.Contains(p, "call.created events, want 1"):
			again++ // announced again in the new epoch: expected
		}
	}
	if again == 0 {
		t.Errorf("no call was announced again: did the state really get lost? %v", r.ByType)
	}
	// The last status published for each participant, in either epoch (Check's own
	// tracking stops at the first chain the loss broke).
	last := map[int64]int{}
	for _, m := range msgs {
		switch m.Event.Type {
		case event.ParticipantJoined:
			var d event.ParticipantData
			if err := json.Unmarshal(m.Event.Data, &d); err == nil {
				last[d.Participant.ID] = d.Participant.CallStatus
			}
		case event.ParticipantStatusChanged:
			var d event.ParticipantStatusData
			if err := json.Unmarshal(m.Event.Data, &d); err == nil {
				last[d.Participant.ID] = d.Current.Code
			}
		}
	}
	for id, p := range truth.Participants {
		if got, ok := last[id]; ok && got != p.Statuses[len(p.Statuses)-1] {
			t.Errorf("participant %d: last published status %d, real %d", id, got, p.Statuses[len(p.Statuses)-1])
		}
	}
	t.Logf("%d messages; %d calls announced again after the loss", r.Messages, again)
}
