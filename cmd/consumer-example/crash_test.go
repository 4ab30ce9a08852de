package main

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/callbus/callbus/events"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asMainEnv makes the test binary run main instead of the tests: the crash tests
// start the service as a real process, which they can SIGKILL.
const asMainEnv = "CONSUMER_EXAMPLE_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// child is the service running as a process of its own.
type child struct {
	cmd    *exec.Cmd
	addr   chan string
	exited chan error
	stderr *buffer
}

// spawn starts the service with c's flags and extra ones.
func (h *harness) spawn(c config, extra ...string) *child {
	h.t.Helper()
	cmd := exec.Command(os.Args[0], append(c.args(), extra...)...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	cmd.Stdout = io.Discard
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	ch := &child{cmd: cmd, addr: make(chan string, 1), exited: make(chan error, 1), stderr: &buffer{}}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go ch.scan(pr)
	go func() { err := cmd.Wait(); _ = pw.Close(); ch.exited <- err }()
	h.t.Cleanup(func() { _ = cmd.Process.Kill() })
	return ch
}

// scan keeps the child's log and reports its HTTP address.
func (ch *child) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		_, _ = ch.stderr.Write([]byte(line + "\n"))
		if _, rest, ok := strings.Cut(line, `"addr":"`); ok && strings.Contains(line, "serving GET /state") {
			addr, _, _ := strings.Cut(rest, `"`)
			ch.addr <- addr
		}
	}
}

// killedBySIGKILL waits for the child to die of SIGKILL (its crash point).
func (ch *child) killedBySIGKILL(t *testing.T) {
	t.Helper()
	select {
	case err := <-ch.exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child exited with %v, want killed by SIGKILL\n%s", err, ch.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("child did not crash\n%s", ch.stderr)
	}
}

// terminate sends SIGTERM and waits for a clean exit.
func (ch *child) terminate(t *testing.T) {
	t.Helper()
	_ = ch.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-ch.exited:
		if err != nil {
			t.Fatalf("child exit: %v\n%s", err, ch.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("child did not stop on SIGTERM\n%s", ch.stderr)
	}
}

// A real crash (SIGKILL) at each step of a message — received (nothing written),
// committed (state and mark written, no ack), acked — then a restart: nothing is
// lost, nothing applied twice, each entity's events applied in order, and the
// state is the last event's.
func TestCrashAtEachStep(t *testing.T) {
	for _, step := range crashSteps {
		t.Run(step, func(t *testing.T) {
			h := newHarness(t)
			var lists [][]events.Envelope
			for id := range int64(3) {
				lists = append(lists, userEvents(t, id+1, 4))
			}
			last := h.interleave(lists)
			c := h.config("crash-" + step)
			c.AckWait, c.BackOff, c.Workers = time.Second, []time.Duration{time.Second, time.Second}, 1
			h.spawn(c, "--crash-at", step+":5").killedBySIGKILL(t)
			if n := len(h.applied(c.Durable)); (step == "received" && n != 4) || (step != "received" && n != 5) {
				t.Fatalf("%d events applied before the crash at %s of the 5th", n, step)
			}
			restarted := h.spawn(c)
			h.settled(c.Durable, last)
			restarted.terminate(t)
			if n := h.audit(c.Durable); n < 10 {
				t.Fatalf("only %d of 12 events applied", n)
			}
			snap, err := newStore(h.rdb, c.Durable, time.Hour).snapshot(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			wantAgents(t, snap, 3, 3)
		})
	}
}

// A message that crashes the process at every delivery stops at MaxDeliver: the
// server's advisory, when a healthy replica pulls next, has it dead-lettered with
// its reason, and counted.
func TestCrashLoopReachesMaxDeliver(t *testing.T) {
	h := newHarness(t)
	poison := userEvents(t, 1, 1)[0]
	seq := h.publish(poison, "")
	c := h.config("crashloop")
	c.AckWait, c.BackOff, c.Workers = 500*time.Millisecond, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond}, 1
	for i := range c.MaxDeliver {
		h.spawn(c, "--crash-at", "received:1").killedBySIGKILL(t)
		waitFor(t, 30*time.Second, fmt.Sprintf("delivery %d", i+1), func() bool { return h.consumerInfo(c.Durable).Delivered.Consumer >= uint64(i+1) })
	}
	healthy := h.spawn(c)
	waitFor(t, 30*time.Second, "the dead letter", func() bool { return len(h.deadLetterMsgs()) == 1 })
	dl := h.deadLetterMsgs()[0]
	if r := dl.Header.Get(HeaderDLQReason); !strings.Contains(r, "max deliveries (3)") || dl.Header.Get(HeaderDLQSequence) != fmt.Sprint(seq) {
		t.Errorf("dead letter: reason %q, seq %s", r, dl.Header.Get(HeaderDLQSequence))
	}
	r := &replica{addr: <-healthy.addr}
	waitFor(t, 30*time.Second, "the dead letter counted", func() bool {
		return r.metric(t, `consumer_example_dead_letters_total{cause="max_deliveries"}`) == 1
	})
	healthy.terminate(t)
	if n := len(h.applied(c.Durable)); n != 0 {
		t.Errorf("%d applied, want 0", n)
	}
}
