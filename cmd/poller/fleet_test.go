package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// fleetStatus reads a member's /status (ok false when it does not answer).
func fleetStatus(addr string) (st service.Status, ok bool) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/status?format=json")
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	return st, resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&st) == nil
}

// leaders maps each account led by one of the members at addrs to its leaders.
func leaders(addrs ...string) map[string][]string {
	out := map[string][]string{}
	for _, addr := range addrs {
		st, _ := fleetStatus(addr)
		for _, a := range st.Accounts {
			if a.Role == "leader" {
				out[a.Account] = append(out[a.Account], st.Instance)
			}
		}
	}
	return out
}

// ledOnce reports whether each of names is led by exactly one member.
func ledOnce(got map[string][]string, names ...string) bool {
	for _, n := range names {
		if len(got[n]) != 1 {
			return false
		}
	}
	return len(got) == len(names)
}

// Two poller processes share an accounts directory (one file per account, the
// key in a file beside it) on one Redis and NATS: each account is led by exactly
// one of them and both list the two members; an account file added while they
// run is picked up; when one member is killed the other leads every account
// within the lease and membership TTL (3 s here, generous margin for a loaded
// machine).
func TestFleetOfPollers(t *testing.T) {
	b := startEngines(t, redistest.Start)
	dir := t.TempDir()
	names := []string{"acme", "globex", "initech"}
	for _, n := range names {
		writeAccount(t, dir, n, startWorld(t, 10, 0).URL, procKey+"\n")
	}
	addrA, addrB := simtest.FreeAddr(t), simtest.FreeAddr(t)
	a := startPoller(t, b.fleetEnv("member-a", addrA, dir))
	startPoller(t, b.fleetEnv("member-b", addrB, dir))
	simtest.WaitFor(t, 60*time.Second, "two members, each account led once", func() bool {
		st, _ := fleetStatus(addrA)
		return st.Fleet != nil && len(st.Fleet.Members) == 2 && ledOnce(leaders(addrA, addrB), names...)
	})
	names = append(names, "umbrella")
	writeAccount(t, dir, "umbrella", startWorld(t, 10, 0).URL, procKey+"\n")
	simtest.WaitFor(t, 60*time.Second, "the added account led once", func() bool { return ledOnce(leaders(addrA, addrB), names...) })

	a.kill(t)
	start := time.Now()
	// member-b may have led every account before the kill (rendezvous hashing over
	// two random member names, or a hand-off not yet made): so the failover is done
	// when member-b also sees itself alone, member-a's membership expired.
	simtest.WaitFor(t, 60*time.Second, "member-b alone, leading every account", func() bool {
		st, _ := fleetStatus(addrB)
		alone := st.Fleet != nil && slices.Equal(st.Fleet.Members, []string{st.Instance})
		return alone && ledOnce(leaders(addrB), names...)
	})
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("failover of member-a's accounts took %s", took)
	}
}
