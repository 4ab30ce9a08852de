package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// A rewind on a running fleet: refused while a member leads unless asked of
// the leader, which then acts on it between two cycles under its own lease; with
// the member killed and its lease expired, done under the command's own lease;
// either way the calls are read again from the earlier time and the stream has
// no duplicate id and no broken chain (audit.Check) once the fleet settles.
func TestRewindOnRunningFleet(t *testing.T) {
	b := startEngines(t, redistest.Start)
	dir := t.TempDir()
	names := []string{"acme", "globex"}
	stores := map[string]*cursor.Store{}
	for _, n := range names {
		writeAccount(t, dir, n, startWorld(t, 10, 0).URL, procKey+"\n")
		s, err := cursor.New(b.redis.Client(t), n)
		if err != nil {
			t.Fatal(err)
		}
		stores[n] = s
	}
	vars := map[string]string{"CALLBUS_ACCOUNTS_DIR": dir, "CALLBUS_REDIS_URL": b.redis.URL, "CALLBUS_NATS_URL": b.nats.URL(),
		"CALLBUS_LEASE_TTL_SECONDS": "3", "CALLBUS_INSTANCE_ID": "ops"}
	rewind := func(args ...string) (cursor.AuditEntry, string, error) {
		var out, errOut bytes.Buffer
		err := run(t.Context(), append([]string{"state", "rewind", "--json"}, args...), env(vars), &out, &errOut)
		var e cursor.AuditEntry
		if err == nil {
			err = json.Unmarshal(out.Bytes(), &e)
		}
		return e, errOut.String(), err
	}
	// ledAndRead: led by a member whose holder starts with prefix, with a high
	// water and a calls cycle after since.
	ledAndRead := func(name, prefix string, since time.Time) bool {
		li, err := stores[name].LeaseInfo(t.Context())
		ops, err2 := stores[name].Ops(t.Context())
		if err != nil || err2 != nil || !strings.HasPrefix(li.Holder, prefix) {
			return false
		}
		last, err := time.Parse(time.RFC3339Nano, ops[poll.OpsCyclePrefix+"calls"])
		hw, _, _ := stores[name].GetCursor(t.Context(), "calls.high_water")
		return err == nil && last.After(since) && hw != ""
	}
	a := startPoller(t, b.fleetEnv("member-a", simtest.FreeAddr(t), dir))
	start := time.Now()
	simtest.WaitFor(t, 90*time.Second, "member-a leads and reads both accounts", func() bool {
		return ledAndRead("acme", "member-a/", start) && ledAndRead("globex", "member-a/", start)
	})
	// poller state while the fleet runs: what the leader noted shows.
	for _, st := range stateOf(t, vars) {
		calls := st.Resources[slices.IndexFunc(st.Resources, func(r service.ResourceState) bool { return r.Name == "calls" })]
		if st.Lease == nil || !strings.HasPrefix(st.Lease.Holder, "member-a/") || calls.LastCycle == "" || calls.HighWater == "" ||
			st.RollbackCheck == nil || st.RollbackCheck.Result != "ok" || st.Epoch == "" {
			t.Errorf("state of %s under member-a: %+v", st.Account, st)
		}
	}
	to := func(name string) string {
		hw, _, err := stores[name].GetCursor(t.Context(), "calls.high_water")
		h, perr := time.Parse(time.RFC3339Nano, hw)
		if err != nil || perr != nil {
			t.Fatalf("%s's high water %q: %v %v", name, hw, err, perr)
		}
		return h.Add(-2 * time.Hour).Format(time.RFC3339)
	}

	if _, _, err := rewind("--account", "acme", "--to", to("acme")); !errors.Is(err, service.ErrLeaderRunning) {
		t.Fatalf("rewind while member-a leads: %v, want ErrLeaderRunning", err)
	}
	e, log, err := rewind("--account", "acme", "--to", to("acme"), "--ask-leader", "--wait", "60s")
	if err != nil || !strings.HasPrefix(e.Holder, "member-a/") || !strings.HasPrefix(e.Result, "done") {
		t.Fatalf("rewind through the leader: %+v, %v\n%s", e, err, log)
	}
	simtest.WaitFor(t, 60*time.Second, "acme's calls read again after the rewind", func() bool { return ledAndRead("acme", "member-a/", e.At) })

	a.kill(t)
	simtest.WaitFor(t, 30*time.Second, "member-a's lease of globex to expire", func() bool {
		li, err := stores["globex"].LeaseInfo(t.Context())
		return err == nil && li.Holder == ""
	})
	e, log, err = rewind("--account", "globex", "--to", to("globex"))
	if err != nil || !strings.HasPrefix(e.Holder, "rewind/ops/") || !strings.HasPrefix(e.Result, "done") {
		t.Fatalf("rewind with the lease free: %+v, %v\n%s", e, err, log)
	}
	startPoller(t, b.fleetEnv("member-b", simtest.FreeAddr(t), dir))
	simtest.WaitFor(t, 90*time.Second, "globex read again by member-b after the rewind", func() bool { return ledAndRead("globex", "member-b/", e.At) })

	js := b.stream(t)
	var reports map[string]*audit.Report
	simtest.WaitFor(t, 90*time.Second, "a stream without duplicates or broken chains, outboxes empty", func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		msgs, err := audit.ReadStream(ctx, js, "CALLCENTER")
		if err != nil {
			return false
		}
		by := byAccount(msgs)
		reports = map[string]*audit.Report{}
		ok := true
		for _, n := range names {
			r := audit.Check(by[n], "callcenter")
			reports[n] = r
			l, err := stores[n].OutboxLen(t.Context())
			ok = ok && r.OK() && err == nil && l == 0 && r.Messages > 0
		}
		return ok
	})
	for n, r := range reports {
		t.Logf("%s: %d events audited", n, r.Messages)
	}
	audits, err := stores["acme"].AuditLog(t.Context(), 10)
	if err != nil || len(audits) != 2 || !strings.HasPrefix(audits[1].Result, "refused: led by member-a/") {
		t.Errorf("acme's audit list %+v (%v): want the leader's done and the refusal", audits, err)
	}
}
