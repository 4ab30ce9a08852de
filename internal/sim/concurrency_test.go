package sim

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentUse runs requests of every kind from several goroutines while the
// clock advances; run with -race.
func TestConcurrentUse(t *testing.T) {
	var truth bytes.Buffer
	s := newTestSim(t, Config{Truth: &truth, Backlog: 100, Drift: 0.2, OffsetRate: 0.2, Order: RandomOrder})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				for _, p := range []string{"/api/v1/calls?per_page=50", "/api/v1/users", "/api/v1/call_metrics?include=life_cycle",
					fmt.Sprintf("/api/v1/calls/%d", callBase+i), "/api/v1/teams", "/api/v1/user-statuses"} {
					if r := do(t, s, "GET", p, testKey, nil); r.code != 200 {
						t.Errorf("GET %s: %d", p, r.code)
					}
				}
				do(t, s, "PUT", fmt.Sprintf("/api/v1/users/%d", 2+g), testKey, map[string]any{"preference": i % 2})
				do(t, s, "POST", "/api/v1/account/export", testKey, map[string]any{"output_format": "json",
					"resources": []any{map[string]any{"name": "teams"}}})
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			s.Advance(time.Minute)
			_, _ = s.ScriptAnsweredCall()
		}
	}()
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	parseTruth(t, truth.Bytes())
}
