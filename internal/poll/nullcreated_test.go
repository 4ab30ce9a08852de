package poll

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/schemas"
)

// Calls the API serves without created_time (every fourth) are announced like
// the others, each once: call.created dated when the poller first saw the call
// (after its participants joined, not after the world's present, never the year
// 1), tracked from then, ended once; every event valid against its schema, and
// /calls keeps its by_time (a call without created_time proves nothing about the
// filter); also when /calls ignores by_time, in every list order.
func TestNullCreatedTimeAnnounced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tweak func(*sim.Config)
	}{
		{"by_time honoured", nil},
		{"by_time ignored, newest first", func(c *sim.Config) { c.CallsIgnoreByTime = true }},
		{"by_time ignored, oldest first", func(c *sim.Config) { c.CallsIgnoreByTime, c.Order = true, sim.OldestFirst }},
		{"by_time ignored, random order", func(c *sim.Config) { c.CallsIgnoreByTime, c.Order = true, sim.RandomOrder }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.Config{Agents: 8, CallRate: 4, Backlog: 20}
			if tc.tweak != nil {
				tc.tweak(&cfg)
			}
			nullCreatedAnnounced(t, cfg)
		})
	}
}

func nullCreatedAnnounced(t *testing.T, cfg sim.Config) {
	h := &hostile{edit: func(c map[string]any) {
		if callID(c)%4 == 0 {
			c["created_time"] = nil
		}
	}}
	p, store, s := newPollerVia(t, cfg, everything, h.wrap)
	stepWorld(t, p, s, 15)
	pollAll(t, p)
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := store.ReadOutbox(t.Context(), "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	created, ended, null := map[string]time.Time{}, map[string]int{}, 0
	joined := map[string]time.Time{} // the call's first participant.joined
	for _, r := range recs {
		if err := v.Validate(r.Data); err != nil {
			t.Errorf("%s: %v", r.Subject, err)
		}
		var e events.Envelope
		if err := json.Unmarshal(r.Data, &e); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case events.CallCreated:
			if _, dup := created[e.Subject]; dup {
				t.Errorf("%s announced twice", e.Subject)
			}
			created[e.Subject] = e.Time
			if strings.Contains(string(e.Data), `"created_time":"0001-01-01T00:00:00Z","updated_time"`) {
				null++
				if e.Time.Year() < 2000 || e.Time.After(s.Now()) {
					t.Errorf("%s (no created_time) dated %s, world at %s", e.Subject, e.Time, s.Now())
				}
			}
		case events.CallEnded:
			ended[e.Subject]++
		case events.ParticipantJoined:
			call := e.Subject[:strings.Index(e.Subject, "/participants/")]
			if first, ok := joined[call]; !ok || e.Time.Before(first) {
				joined[call] = e.Time
			}
		}
	}
	st := s.Stats()
	if len(created) != st.Calls || len(ended) != st.CallsEnded || null == 0 {
		t.Errorf("%d calls announced (%d without created_time), %d ended; the world %+v", len(created), null, len(ended), st)
	}
	for call, at := range created {
		if first, ok := joined[call]; ok && at.Before(first.Add(-time.Second)) {
			t.Errorf("%s: call.created dated %s, before its first participant joined (%s)", call, at, first)
		}
	}
	for call, n := range ended {
		if n != 1 {
			t.Errorf("%s: %d call.ended", call, n)
		}
	}
	if n := h.fullReads(); n != 0 && !cfg.CallsIgnoreByTime {
		t.Errorf("%d reads of /calls without by_time, want none", n)
	}
}
