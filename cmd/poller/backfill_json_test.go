package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// poller backfill --json prints its progress as JSON lines on stdout, with the
// documented field names, the last one in phase done.
func TestBackfillJSON(t *testing.T) {
	b := startBed(t, redistest.Start, 100, sim.Config{Seed: 5, Agents: 4, CallRate: 1, History: 200, HistorySpan: 10 * 24 * time.Hour})
	vars := map[string]string{}
	for _, kv := range b.env("backfill-json", simtest.FreeAddr(t)) {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var out, errOut bytes.Buffer
	args := []string{"backfill", "--json", "--since", b.world.Sim.Start().AddDate(0, -1, 0).Format(time.RFC3339),
		"--until", b.world.Sim.Now().Format(time.RFC3339), "--dir", t.TempDir()}
	if err := run(t.Context(), args, env(vars), &out, &errOut); err != nil {
		t.Fatalf("backfill --json: %v\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last map[string]any
	for _, l := range lines {
		last = nil
		if err := json.Unmarshal([]byte(l), &last); err != nil {
			t.Fatalf("not a JSON line: %q (%v)", l, err)
		}
		for _, f := range []string{"time", "level", "message", "phase", "span", "spans", "records", "events", "events_per_s", "requests"} {
			if _, ok := last[f]; !ok {
				t.Errorf("line %q lacks %s", l, f)
			}
		}
	}
	if last["phase"] != "done" || last["message"] != "backfill progress" || last["records"].(float64) < 200 {
		t.Errorf("last progress line %v: want phase done with the 200 history calls", last)
	}
}
