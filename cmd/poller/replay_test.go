package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// replayBed is a NATS server with the CALLCENTER stream holding five events:
// three of account acme, then two of account globex.
type replayBed struct {
	t      *testing.T
	url    string
	js     jetstream.JetStream
	stream jetstream.Stream
	events []events.Envelope // in stream order: sequence i+1
}

func newReplayBed(t *testing.T) *replayBed {
	t.Helper()
	srv := natstest.Start(t)
	js, err := jetstream.New(srv.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := publish.EnsureStream(t.Context(), js, publish.StreamConfig{Name: "CALLCENTER", Prefix: "callcenter", MaxAge: time.Hour, Dupes: time.Minute, Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &replayBed{t: t, url: srv.URL(), js: js, stream: s}
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	q := "Billing Queue"
	c := events.Call{ID: 1000, Direction: events.DirectionIncoming, AssignedCallQueueName: &q, CreatedTime: at, UpdatedTime: at}
	p := events.Participant{ID: 5001, CallID: 1000, ParticipantID: 304684, ParticipantType: events.ParticipantCustomer, CallStatus: 8, CreatedTime: at, UpdatedTime: at}
	u := events.User{ID: 8, Name: "Yara Patel", Role: events.RoleAgent, Status: 1}
	b.add("acme", events.CallCreated, "calls/1000", at, events.CallData{Call: c})
	b.add("acme", events.ParticipantStatusChanged, "calls/1000/participants/5001", at.Add(time.Second), events.ParticipantStatusData{CallID: 1000, Participant: p,
		Previous: events.CallStatus{Code: 13, Label: "connecting"}, Current: events.CallStatus{Code: 8, Label: "in progress"}})
	b.add("acme", events.UserStatusChanged, "users/8", at.Add(2*time.Second), events.UserStatusData{User: u,
		Previous: events.UserState{Status: 1, StatusName: "Online"}, Current: events.UserState{Status: 2, StatusName: "Busy"}, Changed: []string{"status"}})
	b.add("globex", events.CallEnded, "calls/2000", at.Add(3*time.Second), events.CallData{Call: events.Call{ID: 2000, Direction: events.DirectionOutgoing}})
	b.add("globex", events.UserCreated, "users/9", at.Add(4*time.Second), events.UserData{User: events.User{ID: 9, Name: "Ana Lima", Role: events.RoleAdmin}})
	return b
}

// add publishes an event with the headers the poller's relay sets.
func (b *replayBed) add(account string, typ events.Type, entity string, at time.Time, data any) events.Envelope {
	b.t.Helper()
	e, err := event.New(account, typ, entity, at.String(), at, data)
	if err != nil {
		b.t.Fatal(err)
	}
	body, err := json.Marshal(e)
	if err != nil {
		b.t.Fatal(err)
	}
	m := &nats.Msg{Subject: events.Subject("callcenter", account, typ), Data: body, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, e.ID)
	m.Header.Set(jetstream.ExpectedStreamHeader, "CALLCENTER")
	m.Header.Set("Content-Type", events.ContentType)
	m.Header["traceparent"] = []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	if _, err := b.js.PublishMsg(b.t.Context(), m); err != nil {
		b.t.Fatal(err)
	}
	b.events = append(b.events, e)
	return e
}

// storedAt is the stream's storage time of sequence seq, as RFC 3339.
func (b *replayBed) storedAt(seq uint64) string {
	b.t.Helper()
	m, err := b.stream.GetMsg(b.t.Context(), seq)
	if err != nil {
		b.t.Fatal(err)
	}
	return m.Time.Format(time.RFC3339Nano)
}

// run runs the poller binary with args and returns its stdout.
func (b *replayBed) run(args ...string) (string, error) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	err := run(ctx, args, env(map[string]string{"CALLBUS_NATS_URL": b.url}), &out, &errOut)
	if errors.Is(err, context.DeadlineExceeded) {
		b.t.Fatalf("poller %v did not stop:\n%s", args, out.String())
	}
	return out.String(), err
}

// ids reads NDJSON output, checking every line is a valid envelope.
func (b *replayBed) ids(out string) []string {
	b.t.Helper()
	var ids []string
	for line := range strings.Lines(out) {
		var e events.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			b.t.Fatalf("line %q is not JSON: %v", line, err)
		}
		if err := e.Validate(); err != nil {
			b.t.Fatalf("line %q: %v", line, err)
		}
		ids = append(ids, e.ID)
	}
	return ids
}

// want is the ids of the events at these sequences.
func (b *replayBed) want(seqs ...int) []string {
	var ids []string
	for _, s := range seqs {
		ids = append(ids, b.events[s-1].ID)
	}
	return ids
}

func TestReplayRanges(t *testing.T) {
	b := newReplayBed(t)
	for _, tc := range []struct {
		name string
		args []string
		want []int
	}{
		{"everything", nil, []int{1, 2, 3, 4, 5}},
		{"from a sequence", []string{"--from-seq", "3"}, []int{3, 4, 5}},
		{"since a time", []string{"--since", b.storedAt(4)}, []int{4, 5}},
		{"since a duration ago", []string{"--since", "1h"}, []int{1, 2, 3, 4, 5}},
		{"until a time", []string{"--until", b.storedAt(2)}, []int{1, 2}},
		{"between sequence and time", []string{"--from-seq", "2", "--until", b.storedAt(3)}, []int{2, 3}},
		{"a subject", []string{"--subject", "callcenter.globex.>"}, []int{4, 5}},
		{"two subjects", []string{"--subject", "*.*.call.*", "--subject", "callcenter.*.user.created"}, []int{1, 4, 5}},
		{"types, comma list", []string{"--type", "call.created,call.ended"}, []int{1, 4}},
		{"types, repeated, and a subject", []string{"--type", "user.created", "--type", "user.status_changed", "--subject", "callcenter.acme.>"}, []int{3}},
		{"a future --until", []string{"--until", time.Now().Add(time.Hour).Format(time.RFC3339)}, []int{1, 2, 3, 4, 5}},
		{"past the end", []string{"--from-seq", "6"}, nil},
		{"since the future", []string{"--since", time.Now().Add(time.Hour).Format(time.RFC3339)}, nil},
		{"until before the first", []string{"--until", "2000-01-01T00:00:00Z"}, nil},
		{"no match", []string{"--subject", "callcenter.initech.>"}, nil},
		{"no type match", []string{"--type", "metric.finalized"}, nil},
		{"a past --until with --follow", []string{"--until", b.storedAt(1), "--follow"}, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := b.run(append([]string{"replay"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := b.ids(out), b.want(tc.want...); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("got events %v\nwant %v (sequences %v)", got, want, tc.want)
			}
			if len(tc.want) == 0 && out != "" {
				t.Fatalf("empty range printed %q", out)
			}
		})
	}
}

func TestReplayEmptyStream(t *testing.T) {
	srv := natstest.Start(t)
	js, _ := jetstream.New(srv.Conn(t))
	if _, _, err := publish.EnsureStream(t.Context(), js, publish.StreamConfig{Name: "OTHER", Prefix: "other", MaxAge: time.Hour, Dupes: time.Minute, Memory: true}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(t.Context(), []string{"replay", "--nats-url", srv.URL()}, env(map[string]string{"CALLBUS_STREAM_NAME": "OTHER"}), &out, &out)
	if err != nil || out.Len() != 0 {
		t.Fatalf("empty stream: %v %q", err, out.String())
	}
}

// --pretty prints exactly the demo's feed lines.
func TestReplayPretty(t *testing.T) {
	b := newReplayBed(t)
	out, err := b.run("replay", "--pretty", "--subject", "callcenter.acme.>")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	f := &feed{w: &want}
	for _, e := range b.events[:3] {
		body, _ := json.Marshal(e)
		f.print(body)
	}
	if out != want.String() {
		t.Fatalf("got\n%s\nwant\n%s", out, want.String())
	}
	for _, s := range []string{"call.created", "incoming via Billing Queue", "customer 304684: connecting → in progress", "Yara Patel: Online → Busy"} {
		if !strings.Contains(out, s) {
			t.Errorf("pretty output lacks %q:\n%s", s, out)
		}
	}
}

// --to republishes under another prefix, into whichever stream captures it, with
// the original headers, a new Nats-Msg-Id, and without the original's expected
// stream. A second replay is not dropped by the duplicate window.
func TestReplayTo(t *testing.T) {
	b := newReplayBed(t)
	target, err := b.js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "REPLAYED", Subjects: []string{"replayed.>"}, Storage: jetstream.MemoryStorage, Duplicates: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		out, err := b.run("replay", "--to", "replayed", "--from-seq", "2", "--type", "participant.status_changed,call.ended")
		if err != nil || out != "" {
			t.Fatalf("round %d: %v, printed %q", round, err, out)
		}
		info, err := target.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs != uint64(2*round) {
			t.Fatalf("round %d: target holds %d messages, want %d", round, info.State.Msgs, 2*round)
		}
	}
	for i, want := range []struct {
		subject string
		ev      events.Envelope
		seq     string
	}{
		{"replayed.acme.participant.status_changed", b.events[1], "2"},
		{"replayed.globex.call.ended", b.events[3], "4"},
	} {
		m, err := target.GetMsg(t.Context(), uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(want.ev)
		if m.Subject != want.subject || string(m.Data) != string(body) {
			t.Errorf("message %d: %s %s, want %s with the original body", i+1, m.Subject, m.Data, want.subject)
		}
		id := m.Header.Get(jetstream.MsgIDHeader)
		if !strings.HasPrefix(id, want.ev.ID+".replay-") {
			t.Errorf("message %d: Nats-Msg-Id %q, want the event id with a replay suffix", i+1, id)
		}
		if m.Header.Get("Content-Type") != events.ContentType || m.Header.Get("traceparent") == "" ||
			m.Header.Get(HeaderReplaySequence) != want.seq || m.Header.Get(HeaderReplayStream) != "CALLCENTER" {
			t.Errorf("message %d: headers %v", i+1, m.Header)
		}
		if m.Header.Get(jetstream.ExpectedStreamHeader) != "" {
			t.Errorf("message %d: kept the original's expected stream", i+1)
		}
	}

	// Into the stream being read: refused.
	var ec exitCode
	if _, err := b.run("replay", "--to", "callcenter"); !errors.As(err, &ec) || ec.code != 2 {
		t.Fatalf("--to the source prefix: want exit 2, got %v", err)
	}
	// Nowhere stored: an error, not a silent loss.
	if _, err := b.run("replay", "--to", "nowhere"); err == nil {
		t.Fatal("--to a prefix no stream captures: want an error")
	}
}

// A replay without --follow ends at the last message stored when it started, even
// while events keep arriving.
func TestReplayStopsAtLastSequence(t *testing.T) {
	b := newReplayBed(t)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	published := make(chan error, 1)
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			m := &nats.Msg{Subject: "callcenter.acme.call.created", Data: []byte(`{}`)}
			if _, err := b.js.PublishMsg(ctx, m); err != nil && ctx.Err() == nil {
				published <- err
				return
			}
		}
		published <- nil
	}()
	for range 3 {
		if _, err := b.run("replay", "--type", "call.created"); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if err := <-published; err != nil {
		t.Fatal(err)
	}
}

// --follow prints what is stored, then what arrives, until interrupted; tail shows
// only what arrives.
func TestReplayFollowAndTail(t *testing.T) {
	b := newReplayBed(t)
	type running struct {
		out    *simtest.Buffer
		cancel context.CancelFunc
		done   chan error
	}
	start := func(args ...string) running {
		ctx, cancel := context.WithCancel(t.Context())
		r := running{out: &simtest.Buffer{}, cancel: cancel, done: make(chan error, 1)}
		go func() { r.done <- run(ctx, args, env(map[string]string{"CALLBUS_NATS_URL": b.url}), r.out, r.out) }()
		return r
	}
	lines := func(r running, n int) []string {
		replayWaitFor(t, "lines", func() bool { return strings.Count(r.out.String(), "\n") >= n })
		return strings.Split(strings.TrimSpace(r.out.String()), "\n")
	}
	stop := func(r running) {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Fatalf("after interrupt: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("did not stop when interrupted")
		}
	}

	follow := start("replay", "--follow", "--from-seq", "4")
	if got := lines(follow, 2); len(got) != 2 || !strings.Contains(got[1], b.events[4].ID) {
		t.Fatalf("before new events: %v", got)
	}
	tail := start("tail", "--type", "call.created")
	replayWaitFor(t, "tail's consumer", func() bool {
		info, err := b.stream.Info(t.Context())
		return err == nil && info.State.Consumers == 2
	})
	at := time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)
	b.add("acme", events.UserCreated, "users/10", at, events.UserData{User: events.User{ID: 10, Name: "Noor Haddad", Role: events.RoleAgent}})
	b.add("acme", events.CallCreated, "calls/1001", at, events.CallData{Call: events.Call{ID: 1001, Direction: events.DirectionOutgoing}})
	if got := lines(follow, 4); len(got) != 4 || !strings.Contains(got[3], b.events[6].ID) {
		t.Fatalf("after new events: %v", got)
	}
	got := lines(tail, 1)
	if len(got) != 1 || !strings.Contains(got[0], "call.created") || !strings.Contains(got[0], "calls/1001") || !strings.Contains(got[0], "outgoing") {
		t.Fatalf("tail printed %q", got)
	}
	stop(follow)
	stop(tail)
}

func TestReplayFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"replay", "--since", "yesterday"},
		{"replay", "--since", "-1h"},
		{"replay", "--since", "1h", "--from-seq", "3"},
		{"replay", "--since", "1h", "--until", "2h"},
		{"replay", "--type", "call.exploded"},
		{"replay", "--subject", "callcenter..acme"},
		{"replay", "--to", "a.b"},
		{"replay", "extra"},
		{"replay", "--nope"},
		{"tail", "--pretty"},
		{"tail", "--type", "nope"},
	} {
		var out bytes.Buffer
		err := run(t.Context(), args, env(nil), &out, &out)
		var ec exitCode
		if !errors.As(err, &ec) || ec.code != 2 {
			t.Errorf("%v: want exit 2, got %v", args, err)
		}
	}
}

func TestParseReplayTime(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"90m":                            now.Add(-90 * time.Minute),
		"0s":                             now,
		"2026-11-21T10:00:00Z":           time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC),
		"2026-11-21T11:00:00.5+01:00":    time.Date(2026, 11, 21, 10, 0, 0, 5e8, time.UTC),
		"2026-11-21T10:00:00.123456789Z": time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC),
	} {
		got, err := parseReplayTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: got %v %v, want %v", in, got, err, want)
		}
	}
}

// replayWaitFor polls cond until it holds, failing the test after a deadline.
func replayWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
}
