package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/natstest"
	"github.com/callbus/callbus/internal/redistest"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/simtest"
)

// fleetEnv is a fleet member's environment: pollerEnv's process settings, the
// accounts from dir.
func fleetEnv(natsURL, redisURL, instance, httpAddr, dir string) []string {
	var env []string
	for _, kv := range pollerEnv(&simtest.World{}, natsURL, redisURL, instance, httpAddr) {
		if !strings.HasPrefix(kv, "CALLBUS_API_URL=") && !strings.HasPrefix(kv, "CALLBUS_API_KEY=") && !strings.HasPrefix(kv, "CALLBUS_ACCOUNT=") {
			env = append(env, kv)
		}
	}
	return append(env, "CALLBUS_ACCOUNTS_DIR="+dir)
}

// writeAccount writes <name>.json and its key file into dir, for world w.
func writeAccount(t *testing.T, dir, name string, w *simtest.World) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".key"), []byte(procKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"api_url": w.URL, "api_key_file": name + ".key"})
	if err := os.WriteFile(filepath.Join(dir, name+".json"), body, 0o600); err != nil {
		t.Fatal(err)
	}
}

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
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	dir := t.TempDir()
	names := []string{"acme", "globex", "initech"}
	for _, n := range names {
		writeAccount(t, dir, n, startWorld(t, 10, 0))
	}
	addrA, addrB := simtest.FreeAddr(t), simtest.FreeAddr(t)
	a := startPoller(t, fleetEnv(ns.URL(), rs.URL, "member-a", addrA, dir))
	startPoller(t, fleetEnv(ns.URL(), rs.URL, "member-b", addrB, dir))
	simtest.WaitFor(t, 60*time.Second, "two members, each account led once", func() bool {
		st, _ := fleetStatus(addrA)
		return st.Fleet != nil && len(st.Fleet.Members) == 2 && ledOnce(leaders(addrA, addrB), names...)
	})
	names = append(names, "umbrella")
	writeAccount(t, dir, "umbrella", startWorld(t, 10, 0))
	simtest.WaitFor(t, 60*time.Second, "the added account led once", func() bool { return ledOnce(leaders(addrA, addrB), names...) })

	a.kill(t)
	start := time.Now()
	simtest.WaitFor(t, 60*time.Second, "member-b leading every account", func() bool {
		got := leaders(addrB)
		return ledOnce(got, names...)
	})
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("failover of member-a's accounts took %s", took)
	}
	st, _ := fleetStatus(addrB)
	if st.Fleet == nil || !slices.Equal(st.Fleet.Members, []string{st.Instance}) {
		t.Errorf("after the kill member-b sees the members %+v, want itself alone", st.Fleet)
	}
}
