package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
)

// `poller resync` against a running poller: the leader re-announces every
// user, team and known call once, each snapshot equal to the state last
// announced before it (chains unbroken); the consumer example rebuilds from the
// snapshots alone the state it builds from the whole stream; a second run's ids
// differ from the first's.
func TestResyncRebuildsTheConsumersState(t *testing.T) {
	b := startBed(t, redistest.Start, 0, usualWorld(0))
	js := b.stream(t)
	addr := simtest.FreeAddr(t)
	// The default intervals: at 1 s each the rate budget runs short, and a
	// watermark waits for the cycle under way, which waits for the budget.
	pc := startPoller(t, append(configDefaults(b.env("resync-1", addr)), "CALLBUS_WATERMARK_INTERVAL_SECONDS=1"))
	t.Cleanup(func() {
		if t.Failed() {
			out := pc.stderr.String()
			t.Logf("poller:\n%s", out[max(0, len(out)-6000):])
		}
	})
	for range 10 { // five simulated minutes, while the poller follows
		b.world.Sim.Advance(30 * time.Second)
		time.Sleep(50 * time.Millisecond)
	}
	settled(t, js)

	full := startConsumer(t, b, "full")
	waitSameState(t, full, nil, "the full-stream consumer to catch up", func(s consumerState) bool { return len(s.Agents) > 0 })

	out := resync(t, b, addr, "--resources", "users,teams,calls")
	if !strings.Contains(out, "done") || !strings.Contains(out, "entities re-announced") {
		t.Errorf("resync output lacks its progress:\n%s", out)
	}
	settled(t, js)
	msgs := readStream(t, js)
	checkResync(t, msgs)

	alone := startConsumer(t, b, "alone", "--filter", "callcenter.acme.user.snapshot,callcenter.acme.call.snapshot")
	want := full.state(t)
	waitSameState(t, alone, &want, "the snapshots-only consumer to build the full-stream state", nil)

	// A second run, of one call: its snapshot's id is new.
	var call string
	for _, m := range msgs {
		if m.Event.Type == events.CallSnapshot {
			call = m.Event.Subject
			break
		}
	}
	resync(t, b, addr, "--entity", call)
	settled(t, js)
	ids := map[string]int{}
	for _, m := range readStream(t, js) {
		if m.Event.Type == events.CallSnapshot && m.Event.Subject == call {
			ids[m.Event.ID]++
		}
	}
	if len(ids) != 2 {
		t.Errorf("%s: snapshots %v, want one from each run with distinct ids", call, ids)
	}
}

// checkResync: the stream audits clean (ids unique, chains unbroken); one
// snapshot per user, team and call announced before; each equal to the state
// last announced before it.
func checkResync(t *testing.T, msgs []audit.Message) {
	t.Helper()
	for _, p := range audit.Check(msgs, "callcenter").Problems {
		t.Error(p)
	}
	announced, snapped := map[string]bool{}, map[string]int{}
	userState := map[string][3]int{}
	partStatus := map[int64]int{}
	for _, m := range msgs {
		e := m.Event
		switch e.Type {
		case events.CallCreated, events.UserCreated, events.TeamCreated:
			announced[e.Subject] = true
		case events.ParticipantJoined, events.ParticipantStatusChanged:
			var d events.ParticipantData
			mustDecode(t, e.Data, &d)
			partStatus[d.Participant.ID] = d.Participant.CallStatus
		case events.UserStatusChanged:
			var d events.UserStatusData
			mustDecode(t, e.Data, &d)
			userState[e.Subject] = [3]int{d.Current.Status, d.Current.Preference, d.Current.MobileAppPreference}
		case events.UserSnapshot:
			snapped[e.Subject]++
			var d events.UserSnapshotData
			mustDecode(t, e.Data, &d)
			if s, ok := userState[e.Subject]; ok && s != [3]int{d.State.Status, d.State.Preference, d.State.MobileAppPreference} {
				t.Errorf("seq %d: %s snapshot state %+v, last announced %v", m.Seq, e.Subject, d.State, s)
			}
		case events.CallSnapshot:
			snapped[e.Subject]++
			var d events.CallSnapshotData
			mustDecode(t, e.Data, &d)
			for _, p := range d.Call.Participants {
				if s, ok := partStatus[p.ID]; !ok || s != p.CallStatus {
					t.Errorf("seq %d: %s participant %d status %d, last announced %d (%v)", m.Seq, e.Subject, p.ID, p.CallStatus, s, ok)
				}
			}
		case events.TeamSnapshot:
			snapped[e.Subject]++
		}
	}
	for s := range announced {
		if snapped[s] == 0 {
			t.Errorf("%s: announced, and no snapshot", s)
		}
	}
	for s, n := range snapped {
		// A call before the poller's first read is known but never announced
		// (history is not announced live): it is re-announced too, once.
		if n != 1 {
			t.Errorf("%s: %d snapshots, want 1", s, n)
		}
	}
	if len(snapped) == 0 {
		t.Error("no snapshot in the stream")
	}
}

func mustDecode(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// resync runs `poller resync args` against the bed and returns its output.
func resync(t *testing.T, b *bed, addr string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), pollerBinary(t), append([]string{"resync", "--wait", "30s"}, args...)...)
	cmd.Env = b.env("resync-cli", addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("poller resync %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// settled waits until the stream takes only watermarks: three more of them and
// no other event.
func settled(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	const wm = "callcenter.acme.account.watermark"
	count := func() (others, marks uint64) {
		marks = subjectCount(t, js, wm)
		return streamMsgs(t, js) - marks, marks
	}
	o, w := count()
	defer func() {
		if t.Failed() {
			no, nw := count()
			t.Logf("stream: %d events and %d watermarks, then %d and %d", o, w, no, nw)
		}
	}()
	simtest.WaitFor(t, 90*time.Second, "the stream to settle", func() bool {
		time.Sleep(200 * time.Millisecond)
		no, nw := count()
		if no != o {
			o, w = no, nw
			return false
		}
		return nw >= w+3
	})
}

// consumer is a consumer-example process.
type consumer struct{ addr string }

// consumerState is its GET /state without what depends on the events'
// places in the stream (versions, times, names of statuses).
type consumerState struct {
	Agents []string
	Calls  []string
}

func (c consumer) state(t *testing.T) consumerState {
	t.Helper()
	resp, err := http.Get("http://" + c.addr + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Agents []struct {
			ID         int64
			Role       string
			Status     int
			Preference int
		}
		Calls []struct {
			ID           int64
			Direction    string
			Queue, Agent string
			Participants []struct {
				ID     int64
				Status int
			}
		}
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("GET /state: %v\n%s", err, body)
	}
	var s consumerState
	for _, a := range raw.Agents {
		s.Agents = append(s.Agents, fmt.Sprintf("%d %s %d/%d", a.ID, a.Role, a.Status, a.Preference))
	}
	for _, c := range raw.Calls {
		line := fmt.Sprintf("%d %s %s %s", c.ID, c.Direction, c.Queue, c.Agent)
		for _, p := range c.Participants {
			line += fmt.Sprintf(" %d:%d", p.ID, p.Status)
		}
		s.Calls = append(s.Calls, line)
	}
	sort.Strings(s.Agents)
	sort.Strings(s.Calls)
	return s
}

// startConsumer runs the consumer example as durable with more flags, built
// from ../consumer-example.
func startConsumer(t *testing.T, b *bed, durable string, more ...string) consumer {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "consumer-example")
	if out, err := exec.Command("go", "build", "-o", bin, "../consumer-example").CombinedOutput(); err != nil {
		t.Fatalf("build the consumer example: %v\n%s", err, out)
	}
	c := consumer{addr: simtest.FreeAddr(t)}
	cmd := exec.Command(bin, append([]string{"--nats-url", b.nats.URL(), "--redis-url", b.redis.URL, "--durable", durable,
		"--http-addr", c.addr, "--account", "acme"}, more...)...)
	log := &simtest.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("consumer %s:\n%s", durable, log.String())
		}
	})
	return c
}

// waitSameState waits until c's state equals want (or, want nil, meets cond and
// stops changing).
func waitSameState(t *testing.T, c consumer, want *consumerState, what string, cond func(consumerState) bool) {
	t.Helper()
	var last consumerState
	stable := 0
	deadline := time.Now().Add(90 * time.Second)
	for {
		time.Sleep(300 * time.Millisecond)
		resp, err := http.Get("http://" + c.addr + "/state")
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			}
			continue
		}
		resp.Body.Close()
		s := c.state(t)
		if want != nil && reflect.DeepEqual(s, *want) {
			return
		}
		if want == nil && cond(s) && reflect.DeepEqual(s, last) {
			if stable++; stable >= 5 {
				return
			}
		} else {
			stable = 0
		}
		last = s
		if time.Now().After(deadline) {
			if want != nil {
				t.Fatalf("%s: state\n%v\nwant\n%v", what, s, *want)
			}
			t.Fatalf("%s: state %v", what, s)
		}
	}
}

// With no replica leading the account, `poller resync` withdraws its request
// after --wait and says so, exit status 1; nothing is re-announced later.
func TestResyncWithoutLeaderRefuses(t *testing.T) {
	b := startBed(t, redistest.Start, 0, usualWorld(0))
	cmd := exec.CommandContext(t.Context(), pollerBinary(t), "resync", "--wait", "1s", "--resources", "users")
	cmd.Env = b.env("resync-cli", simtest.FreeAddr(t))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "no replica leads the account (no process holds its lease)") {
		t.Fatalf("resync without a leader: %v\n%s", err, out)
	}
	if n, err := b.redis.Client(t).LLen(t.Context(), "callbus:{acme}:resync:queue").Result(); err != nil || n != 0 {
		t.Errorf("the request stayed queued: %d %v", n, err)
	}
}
