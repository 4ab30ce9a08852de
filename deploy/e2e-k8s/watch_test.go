//go:build e2ek8s

package e2ek8s

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// pods are the running (not terminating) pods of a release, by name.
func (b *bed) pods(t *testing.T, release string) map[string]corev1.Pod {
	t.Helper()
	var list corev1.PodList
	out := b.k(t, "get", "pods", "-l", "app.kubernetes.io/instance="+release+",app.kubernetes.io/name=callbus,app.kubernetes.io/component!=test", "-o", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("kubectl get pods: %v", err)
	}
	m := map[string]corev1.Pod{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			m[p.Name] = p
		}
	}
	return m
}

// restarts is the sum of the containers' restart counts of pods.
func restarts(pods map[string]corev1.Pod) int {
	n := 0
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			n += int(c.RestartCount)
		}
	}
	return n
}

// holders is each account's lease holder's instance (the pod's name), "" when the
// lease is free.
func (b *bed) holders(t *testing.T, accounts []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range accounts {
		h, _, _, err := b.store(t, a).Leader(t.Context())
		if err == nil {
			instance, _, _ := strings.Cut(h, "/")
			out[a] = instance
		} else {
			out[a] = ""
		}
	}
	return out
}

// unled are the accounts whose holder is not among live.
func unled(hs map[string]string, live func(string) bool) []string {
	var out []string
	for a, h := range hs {
		if h == "" || !live(h) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// waitLed waits until every account is led by a running pod of release, and
// returns how long that took; it fails t after limit.
func (b *bed) waitLed(t *testing.T, release string, accounts []string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		pods := b.pods(t, release)
		missing := unled(b.holders(t, accounts), func(h string) bool { _, ok := pods[h]; return ok })
		if len(missing) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("after %s, accounts not led by a running pod of %s: %v", limit, release, missing)
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
}

// share is how many accounts each pod leads.
func share(hs map[string]string) map[string]int {
	out := map[string]int{}
	for _, h := range hs {
		if h != "" {
			out[h]++
		}
	}
	return out
}

// tracker samples the lease holders every 100 ms while a change runs: how often
// each account changed holder, and the longest time any account had none.
type tracker struct {
	mu      sync.Mutex
	moves   map[string]int
	gap     time.Duration
	stop    chan struct{}
	stopped chan struct{}
}

// track starts sampling accounts' holders until the returned tracker's end.
func (b *bed) track(t *testing.T, accounts []string) *tracker {
	tr := &tracker{moves: map[string]int{}, stop: make(chan struct{}), stopped: make(chan struct{})}
	last := b.holders(t, accounts)
	freeSince := map[string]time.Time{}
	go func() {
		defer close(tr.stopped)
		for {
			select {
			case <-tr.stop:
				return
			case <-time.After(100 * time.Millisecond): // sampling interval
			}
			now := time.Now()
			hs := map[string]string{}
			for _, a := range accounts {
				h, _, _, err := b.store(t, a).Leader(t.Context())
				if err != nil {
					hs[a] = ""
					continue
				}
				hs[a], _, _ = strings.Cut(h, "/")
			}
			tr.mu.Lock()
			for _, a := range accounts {
				if hs[a] == "" {
					if freeSince[a].IsZero() {
						freeSince[a] = now
					}
					continue
				}
				if !freeSince[a].IsZero() {
					tr.gap = max(tr.gap, now.Sub(freeSince[a]))
					freeSince[a] = time.Time{}
				}
				if last[a] != "" && hs[a] != last[a] {
					tr.moves[a]++
				}
				last[a] = hs[a]
			}
			tr.mu.Unlock()
		}
	}()
	return tr
}

// end stops sampling; it returns the most moves of one account, their total and
// the longest leaderless time.
func (tr *tracker) end() (most, total int, gap time.Duration) {
	close(tr.stop)
	<-tr.stopped
	for _, n := range tr.moves {
		most, total = max(most, n), total+n
	}
	return most, total, tr.gap
}

// results is the table make e2e-k8s prints.
type results struct {
	mu   sync.Mutex
	rows [][3]string
}

// add records a scenario's outcome and what was measured.
func (r *results) add(t *testing.T, scenario, measured string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	status := "PASS"
	if t.Failed() {
		status = "FAIL"
	}
	if t.Skipped() {
		status = "SKIP"
	}
	r.rows = append(r.rows, [3]string{scenario, status, measured})
}

// write prints the table to stdout and, when E2E_RESULTS names a file, as
// Markdown there.
func (r *results) write() {
	r.mu.Lock()
	defer r.mu.Unlock()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tRESULT\tMEASURED")
	var md strings.Builder
	md.WriteString("| scenario | result | measured |\n|---|---|---|\n")
	for _, row := range r.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row[0], row[1], row[2])
		fmt.Fprintf(&md, "| %s | %s | %s |\n", row[0], row[1], row[2])
	}
	_ = tw.Flush()
	if f := os.Getenv("E2E_RESULTS"); f != "" {
		_ = os.WriteFile(f, []byte(md.String()), 0o644)
	}
}
