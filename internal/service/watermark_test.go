package service

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/callbus/callbus/schemas"
	"github.com/rs/zerolog"
)

// A running service publishes account.watermark every watermark_interval_seconds,
// never more often, and each watermark follows in the stream every event about
// what it covers: after the world moves and stands still, the first watermark
// whose calls and users marks are past that moment comes after the call.created
// of every call and the user.created of every user the world has.
func TestWatermarksFollowWhatTheyCover(t *testing.T) {
	rs, ns := redistest.Start(t), natstest.Start(t)
	w := newWorld(t, nil)
	set := testSettings(w, ns.URL(), rs.URL, "wm-1")
	set.WatermarkInterval = time.Second
	r := start(t, w, set, zerolog.New(io.Discard))
	defer r.stop(t)
	for round := range 3 {
		r.advance(t, 1)
		st := w.Sim.Stats()
		// The poller's present is at least the wall clock, or the API's own
		// (its Date headers): a read that began before this moment is dated
		// before mark.
		mark := maxTime(time.Now(), w.Sim.Now()).Add(2 * time.Second)
		var wm audit.Message
		var read time.Time
		simtest.WaitFor(t, 60*time.Second, "a watermark past the world's step", func() bool {
			if time.Since(read) < 500*time.Millisecond {
				return false // each read is an ordered consumer: a few a second at most
			}
			read = time.Now()
			msgs := readStream(t, ns)
			for _, m := range msgs {
				if m.Event.Type != events.AccountWatermark {
					continue
				}
				d := watermarkOf(t, m)
				if until(d, poll.ResCalls).After(mark) && until(d, poll.ResUsers).After(mark) {
					wm = m
					return true
				}
			}
			return false
		})
		calls, users := map[string]bool{}, map[string]bool{}
		for _, m := range readStream(t, ns) {
			if m.Seq >= wm.Seq {
				break
			}
			switch m.Event.Type {
			case events.CallCreated:
				calls[m.Event.Subject] = true
			case events.UserCreated:
				users[m.Event.Subject] = true
			}
		}
		if len(calls) != st.Calls || len(users) != st.Users {
			t.Errorf("round %d: before the watermark at seq %d: %d calls and %d users announced, the world has %d and %d",
				round, wm.Seq, len(calls), len(users), st.Calls, st.Users)
		}
	}
	msgs := readStream(t, ns)
	var prev *audit.Message
	n := 0
	for i, m := range msgs {
		if m.Event.Type != events.AccountWatermark {
			continue
		}
		n++
		d := watermarkOf(t, m)
		if d.IntervalSeconds != 1 || d.State == "" || m.Event.Subject != "accounts/acme" {
			t.Errorf("seq %d: watermark %+v on %s", m.Seq, d, m.Event.Subject)
		}
		// Committed at most once an interval (the stream's clock, with a
		// margin for the relay's batching).
		if prev != nil && m.Published.Sub(prev.Published) < 500*time.Millisecond {
			t.Errorf("seq %d: watermark %s after the previous one, want about the interval (1s)", m.Seq, m.Published.Sub(prev.Published))
		}
		prev = &msgs[i]
	}
	if n < 3 {
		t.Errorf("%d watermarks, want one a second", n)
	}
	rep := audit.Check(msgs, "callcenter")
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	rep.Problems = append(rep.Problems, audit.ValidateSchemas(msgs, v)...)
	for _, p := range rep.Problems {
		t.Error(p)
	}
}

func watermarkOf(t *testing.T, m audit.Message) events.WatermarkData {
	t.Helper()
	var d events.WatermarkData
	if err := json.Unmarshal(m.Event.Data, &d); err != nil {
		t.Fatalf("seq %d: %v", m.Seq, err)
	}
	return d
}

// until is the mark of res in d (zero when d has none).
func until(d events.WatermarkData, res string) time.Time {
	for _, r := range d.Resources {
		if r.Resource == res {
			return r.Until
		}
	}
	return time.Time{}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
