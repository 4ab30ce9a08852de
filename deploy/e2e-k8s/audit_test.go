//go:build e2ek8s

package e2ek8s

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/nats-io/nats.go/jetstream"
)

// audit stops the simulated clock and audits every account's events against its
// truth until all are clean with empty outboxes (the pollers catch up) or three
// minutes pass; then checks that no pod logged an API key.
func (s *suite) audit(t *testing.T) string {
	s.b.sim.Freeze()
	js, err := jetstream.New(s.b.nats.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	accounts := append([]string{"acct001"}, s.fleet...)
	deadline := time.Now().Add(3 * time.Minute)
	var reports map[string]*audit.Report
	var n, calls int
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		msgs, err := audit.ReadStream(ctx, js, "CALLCENTER")
		cancel()
		if err == nil {
			var settled bool
			reports, calls, settled = s.auditOnce(t, accounts, msgs)
			n = len(msgs)
			if settled {
				break
			}
		}
		if time.Now().After(deadline) {
			for a, r := range reports {
				if !r.OK() {
					t.Errorf("%s: %d problems, first: %s", a, len(r.Problems), strings.Join(r.Problems[:min(3, len(r.Problems))], "; "))
				}
			}
			t.Fatalf("not settled after 3 minutes (last read error: %v)", err)
		}
		time.Sleep(time.Second) // pacing between audits, not a wait for a condition
	}
	logs := s.b.k(t, "logs", "-l", "app.kubernetes.io/name=callbus", "--tail=-1", "--prefix", "--max-log-requests=10")
	for _, a := range s.all {
		if strings.Contains(logs, "key-"+a) {
			t.Errorf("%s's API key appears in a pod's log", a)
		}
	}
	return fmt.Sprintf("%d accounts clean: %d events, %d calls, one call.created each, ended calls ended + finalized once", len(accounts), n, calls)
}

// auditOnce audits each account once; settled when every one is clean and its
// outbox empty.
func (s *suite) auditOnce(t *testing.T, accounts []string, msgs []audit.Message) (map[string]*audit.Report, int, bool) {
	by := map[string][]audit.Message{}
	for _, m := range msgs {
		a := strings.TrimPrefix(m.Event.Source, events.Source(""))
		by[a] = append(by[a], m)
	}
	reports, calls, settled := map[string]*audit.Report{}, 0, true
	for _, a := range accounts {
		r := audit.Check(by[a], "callcenter")
		r.CompareTruth(s.b.sim.ReadTruth(t, a))
		sm, err := s.b.sim.Sim(a)
		if err != nil {
			t.Fatal(err)
		}
		st := sm.Stats()
		r.CompareCounts(st.Calls, st.CallsEnded, st.MetricsFinalized)
		calls += st.Calls
		left, err := s.b.store(t, a).OutboxLen(t.Context())
		if !r.OK() || err != nil || left > 0 {
			settled = false
		}
		reports[a] = r
	}
	return reports, calls, settled
}

// uninstall removes both releases and checks what is left: no object of theirs
// (helm uninstall --wait returns while pods still terminate: they are waited for),
// the accounts Secret that is the user's, and in Redis the accounts' state (cursors,
// snapshots) kept for a reinstall, their leases released.
func (s *suite) uninstall(t *testing.T) string {
	// The drain deleted the earlier test pods (kubectl drain removes finished pods):
	// a helm test of each release, after the rollback, leaves the pods that the
	// uninstall must leave behind.
	for _, rel := range []string{"fleet", "solo"} {
		if out := s.b.h(t, "test", rel, "--logs"); !strings.Contains(out, "ready: http://") {
			t.Fatalf("helm test %s --logs after the rollback:\n%s", rel, out)
		}
	}
	start := time.Now()
	s.b.h(t, "uninstall", "fleet", "--wait", "--timeout", "3m")
	s.b.h(t, "uninstall", "solo", "--wait", "--timeout", "3m")
	returned := time.Since(start)
	left := s.b.k(t, "get", "pods", "-l", "app.kubernetes.io/component!=test", "-o", "name")
	// The test pods stay for helm test --logs (Helm deletes no hook on uninstall):
	// the documented clean-up.
	tests := strings.Fields(s.b.k(t, "get", "pods", "-l", "app.kubernetes.io/component=test", "-o", "name"))
	if len(tests) != 2 {
		t.Errorf("test pods after uninstall: %v, want the 2 releases' last", tests)
	}
	for _, rel := range []string{"fleet", "solo"} {
		s.b.k(t, "delete", "pod", "-l", "app.kubernetes.io/instance="+rel, "--wait=false")
	}
	gone := waitUntil(t, 2*time.Minute, "pods gone", func() bool {
		return strings.TrimSpace(s.b.k(t, "get", "pods", "-o", "name")) == ""
	})
	kinds := "deploy,rs,pod,svc,cm,secret,sa,pdb,networkpolicy,role,rolebinding,servicemonitor,prometheusrule"
	for _, rel := range []string{"fleet", "solo"} {
		if out := strings.TrimSpace(s.b.k(t, "get", kinds, "-l", "app.kubernetes.io/instance="+rel, "-o", "name")); out != "" {
			t.Errorf("left by %s: %s", rel, out)
		}
	}
	if out := strings.TrimSpace(s.b.k(t, "get", "secret", "-o", "name")); out != "secret/"+accountsSecret {
		t.Errorf("secrets left: %q, want only the user's %s", out, accountsSecret)
	}
	kept := 0
	for _, a := range append([]string{"acct001"}, s.fleet...) {
		keys, err := s.b.rdb.Keys(t.Context(), "*"+a+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			kept++
		}
		if h := s.b.holders(t, []string{a})[a]; h != "" {
			t.Errorf("%s's lease still held by %s", a, h)
		}
	}
	if kept != len(s.fleet)+1 {
		t.Errorf("Redis state kept for %d accounts, want all %d", kept, len(s.fleet)+1)
	}
	return fmt.Sprintf("helm test passed again; uninstall --wait returned after %.1fs with %d pods still terminating, gone %.1fs later; left: the 2 test pods (documented, deleted); Redis state of %d accounts kept, leases free",
		returned.Seconds(), len(strings.Fields(left)), gone.Seconds(), kept)
}
