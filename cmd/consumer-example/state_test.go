package main

import (
	"context"
	"encoding/json"
	"go.opentelemetry.io/otel/trace/noop"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/simtest"
	"github.com/rs/zerolog"
)

// service is serve running in a goroutine, with its stdout, logs and address.
type service struct {
	out, log *simtest.Buffer
	addr     string
	cancel   context.CancelFunc
	done     chan error
}

func (h *harness) serve(c config) *service {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.t.Context())
	s := &service{out: &simtest.Buffer{}, log: &simtest.Buffer{}, cancel: cancel, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		s.done <- serve(ctx, c, noop.NewTracerProvider(), s.out, zerolog.New(s.log), func(a string) { addr <- a })
	}()
	select {
	case s.addr = <-addr:
	case err := <-s.done:
		h.t.Fatalf("serve: %v\n%s", err, s.log)
	}
	h.t.Cleanup(func() { cancel(); <-s.done })
	return s
}

func (s *service) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("serve: %v\n%s", err, s.log)
	}
	s.done <- nil
}

func (s *service) state(t *testing.T) snapshot {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap snapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

func (s *service) waitLines(t *testing.T, n int) []string {
	t.Helper()
	simtest.WaitFor(t, settle, "summary lines", func() bool { return len(s.out.Lines()) >= n })
	return s.out.Lines()
}

// A scripted sequence of events builds the expected /state and summary lines; a
// second run with the same durable name handles none of them again.
func TestStateFromEvents(t *testing.T) {
	h := newHarness(t)
	c := h.config("board")
	c.LagInterval = 20 * time.Millisecond
	svc := h.serve(c)

	busy := event.UserState{Status: 2, StatusName: "Busy", Preference: 1, PreferenceName: "Online"}
	online := event.UserState{Status: 1, StatusName: "Online", Preference: 1, PreferenceName: "Online"}
	script := []event.Envelope{
		mustEvent(t, event.UserCreated, "users/8", "created", t0, event.UserData{User: yara()}),
		mustEvent(t, event.UserStatusChanged, "users/8", "status=2", t0.Add(2*time.Second),
			event.UserStatusData{User: yara(), Previous: online, Current: busy, Changed: []string{"status"}}),
		mustEvent(t, event.CallCreated, "calls/1000", "created", t0.Add(3*time.Second),
			event.CallData{Call: call1000(customer(13, t0))}),
		mustEvent(t, event.ParticipantJoined, "calls/1000/participants/5002", "joined", t0.Add(4*time.Second),
			event.ParticipantData{CallID: 1000, Participant: agentLeg(13, t0.Add(4*time.Second))}),
		mustEvent(t, event.ParticipantStatusChanged, "calls/1000/participants/5001", "status=8", t0.Add(5*time.Second),
			event.ParticipantStatusData{CallID: 1000, Participant: customer(8, t0.Add(5*time.Second)),
				Previous: event.CallStatus{Code: 13, Label: "connecting"}, Current: event.CallStatus{Code: 8, Label: "in progress"}}),
	}
	for _, e := range script {
		h.publish(e, "")
	}
	lines := svc.waitLines(t, len(script))
	want := []string{
		"10:00:00  agent 8 Yara Patel (Agent): Online",
		"10:00:02  agent 8 Yara Patel: Online → Busy",
		"10:00:03  call 1000 opened: incoming via Billing Queue, 1 participants",
		"10:00:04  call 1000: agent 8 joined (connecting)",
		"10:00:05  call 1000: customer 304684 connecting → in progress",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("summary lines:\ngot\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	snap := svc.state(t)
	if len(snap.Agents) != 1 || len(snap.Calls) != 1 {
		t.Fatalf("state: %+v", snap)
	}
	if a := snap.Agents[0]; a.ID != 8 || a.Name != "Yara Patel" || a.StatusName != "Busy" || a.PreferenceName != "Online" {
		t.Errorf("agent: %+v", a)
	}
	call := snap.Calls[0]
	if call.ID != 1000 || call.Queue != "Billing Queue" || call.Direction != "incoming" || len(call.Participants) != 2 {
		t.Fatalf("call: %+v", call)
	}
	for i, want := range []struct {
		id       int64
		typ      string
		status   int
		label    string
		personID int64
	}{{5001, "customer", 8, "in progress", 304684}, {5002, "agent", 13, "connecting", 8}} {
		p := call.Participants[i]
		if p.ID != want.id || p.Type != want.typ || p.Status != want.status || p.StatusLabel != want.label || p.ParticipantID != want.personID {
			t.Errorf("participant %d: got %+v, want %+v", i, p, want)
		}
	}

	// A repeat and a late event change nothing; call.ended closes the call.
	h.publish(script[4], script[4].ID+"-resent")
	h.publish(mustEvent(t, event.CallEnded, "calls/1000", "ended", t0.Add(9*time.Second),
		event.CallData{Call: call1000(customer(1, t0.Add(9*time.Second)), agentLeg(1, t0.Add(9*time.Second)))}), "")
	last := h.publish(mustEvent(t, event.ParticipantStatusChanged, "calls/1000/participants/5002", "status=1", t0.Add(8*time.Second),
		event.ParticipantStatusData{CallID: 1000, Participant: agentLeg(1, t0.Add(8*time.Second))}), "")
	h.settled(c.Durable, last)
	lines = svc.out.Lines()
	if len(lines) != 6 || lines[5] != "10:00:09  call 1000 ended: 2 participants, billed 95s" {
		t.Fatalf("after call.ended:\n%s", strings.Join(lines, "\n"))
	}
	if snap := svc.state(t); len(snap.Calls) != 0 || len(snap.Agents) != 1 {
		t.Fatalf("state after call.ended: %+v", snap)
	}
	simtest.WaitFor(t, settle, "a lag log line", func() bool { return strings.Contains(svc.log.String(), `"pending":0`) })
	svc.stop(t)

	// Same durable again: it resumes after its last ack. Only an event published
	// now is handled.
	delivered := h.deliveries(c.Durable)
	again := h.serve(c)
	fresh := yara()
	fresh.ID, fresh.Name = 9, "Ana Lima"
	h.publish(mustEvent(t, event.UserCreated, "users/9", "created", t0.Add(time.Minute), event.UserData{User: fresh}), "")
	lines = again.waitLines(t, 1)
	if len(lines) != 1 || !strings.Contains(lines[0], "agent 9 Ana Lima") {
		t.Fatalf("second run handled:\n%s", strings.Join(lines, "\n"))
	}
	again.stop(t)
	if n := h.deliveries(c.Durable) - delivered; n != 1 {
		t.Errorf("second run received %d deliveries, want 1 (the new event)", n)
	}
	if !strings.Contains(again.log.String(), "drained; stopped") {
		t.Errorf("no drain in the log:\n%s", again.log)
	}
}
