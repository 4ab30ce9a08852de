package service

import (
	"encoding/json"
	"errors"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/secret"
	"github.com/rs/zerolog"
)

// The board keeps the last events and warnings (no more than statusLines), the
// last cycle per resource, and masks secret values out of every message.
func TestStatusBoard(t *testing.T) {
	s := testSettings(&simtest.World{URL: "http://127.0.0.1:1"}, "nats://127.0.0.1:1", "redis://127.0.0.1:1", "i-1")
	s.RedisPassword = secret.New("redis-pass-77")
	b := newStatusBoard("v9")
	ab := b.add(s)
	log := zerolog.New(nil).Level(zerolog.InfoLevel).Hook(b)
	log.Info().Msg("not kept")
	log.Warn().Msg("cannot reach redis-pass-77 and " + testKey)
	ab.intervals(t.Context(), map[string]time.Duration{poll.ResCalls: 3 * time.Second})
	ab.cycle(t.Context(), poll.ResCalls, time.Millisecond, 2, errors.New("list calls: 503 with key "+testKey))
	pub := ab.published(nil)
	var ps []publish.Published
	for i := range statusLines + 3 {
		ps = append(ps, publish.Published{Committed: event.Committed{Message: event.Message{ID: "id-" + string(rune('a'+i)), Type: "call.created", Data: []byte(`{"subject":"calls/812"}`)}}})
	}
	pub(ps[:2]) // a batch, then one of more than the board keeps
	pub(ps[2:])
	st := b.snapshot(t.Context())
	a := st.Accounts[0]
	if a.Account != "acme" || st.Role != "standby" || st.Version != "v9" || a.Budget.Share != 1 {
		t.Errorf("status %+v, want acme, standby, v9, share 1", st)
	}
	if len(a.Events) != statusLines || a.Events[0].Text != "id-"+string(rune('a'+statusLines+2)) {
		t.Errorf("events %+v, want the last %d, newest first", a.Events, statusLines)
	}
	var calls ResourceStatus
	for _, r := range a.Resources {
		if r.Name == poll.ResCalls {
			calls = r
		}
	}
	if calls.EffectiveSeconds != 3 || calls.TargetSeconds != 0.04 || calls.LastRequests != 2 || !strings.Contains(calls.LastError, "503") {
		t.Errorf("calls %+v, want effective 3 s, target 40 ms, 2 requests, the error", calls)
	}
	if len(st.Errors) != 1 || st.Errors[0].Kind != "warn" {
		t.Errorf("errors %+v, want the one warning", st.Errors)
	}
	rec := httptest.NewRecorder()
	b.routes(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/status", nil))
	out, _ := json.Marshal(st)
	for _, body := range []string{rec.Body.String(), string(out)} {
		if strings.Contains(body, testKey) || strings.Contains(body, "redis-pass-77") {
			t.Errorf("a secret reaches the status page:\n%s", body)
		}
	}
	if !strings.Contains(rec.Body.String(), `<span id="role" class="badge standby">standby</span>`) {
		t.Errorf("page lacks the role:\n%s", rec.Body.String())
	}
}

// GET /status of a running service: JSON with ?format=json or Accept, HTML
// otherwise, showing this replica leading, the leader Redis names, effective
// intervals, the budget and published events.
func TestStatusOfRunningService(t *testing.T) {
	r := startRunning(t, "status-1", nil)
	r.advance(t, 20)
	var st Status
	simtest.WaitFor(t, 30*time.Second, "events on /status", func() bool {
		st = Status{}
		if err := decodeStatus(r.get(t, "/status?format=json", ""), &st); err != nil {
			t.Fatal(err)
		}
		return len(st.Accounts) == 1 && len(st.Accounts[0].Events) > 0 && st.Accounts[0].Budget.Limit > 0
	})
	a := st.Accounts[0]
	if st.Role != "leader" || a.Leader != st.Instance || !strings.HasPrefix(st.Instance, "status-1/") || a.LeaseTTLSeconds <= 0 {
		t.Errorf("role %q, instance %q, leader %q (ttl %v): want this replica leading", st.Role, st.Instance, a.Leader, a.LeaseTTLSeconds)
	}
	if len(a.Resources) != 5 {
		t.Errorf("resources %+v, want the five polled", a.Resources)
	}
	for _, res := range a.Resources {
		if res.EffectiveSeconds <= 0 || res.LastCycle.IsZero() {
			t.Errorf("resource %+v: no effective interval or cycle", res)
		}
	}
	var viaAccept Status
	if err := json.Unmarshal([]byte(r.get(t, "/status", "application/json")), &viaAccept); err != nil || viaAccept.Instance != st.Instance {
		t.Errorf("Accept: application/json gave %+v, %v", viaAccept, err)
	}
	page := r.get(t, "/status", "text/html")
	for _, want := range []string{"Account acme", `class="badge leader"`, "call.created", `data-resource="user_statuses"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, testKey) {
		t.Error("the API key appears on the status page")
	}
	r.get(t, "/healthz", "") // the other routes still answer
}

// decodeStatus decodes the JSON of /status?format=json.
func decodeStatus(body string, st *Status) error {
	return json.Unmarshal([]byte(body), st)
}
