package backfill

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestProgressLine: on a terminal, one line redrawn in place with the phase, a
// bar, the counts, the rate and an ETA.
func TestProgressLine(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, zerolog.Nop(), time.Second)
	p.Update(func(s *State) {
		s.Phase, s.Span, s.Spans, s.Bytes, s.Total, s.Records, s.Events, s.Requests = PhasePublishing, 1, 2, 0, 100, 10, 50, 4
	})
	p.mu.Lock()
	p.s.PhaseStarted = p.s.PhaseStarted.Add(-10 * time.Second) // ten seconds into the phase
	p.mu.Unlock()
	p.Update(func(s *State) { s.Bytes = 25 })
	p.show()
	got := out.String()
	for _, want := range []string{"\rbackfill 1/2 publishing", "[#####               ]  25%", "10 records  50 events", "4 requests", "ETA 30s"} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
	}
}

// TestProgressLog: elsewhere, JSON log lines with the same figures.
func TestProgressLog(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(nil, zerolog.New(&out), time.Second)
	p.Update(func(s *State) {
		s.Phase, s.JobID, s.Records, s.Events, s.Bytes, s.Total = PhaseDownloading, 7, 3, 9, 50, 200
	})
	p.show()
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if line["phase"] != "downloading" || line["job_id"] != 7.0 || line["events"] != 9.0 || line["phase_done"] != 0.25 {
		t.Errorf("log line %v", line)
	}
}
