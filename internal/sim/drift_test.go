package sim

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestDriftVariants(t *testing.T) {
	s := newTestSim(t, Config{Drift: 1, OffsetRate: 1, Backlog: 20})
	s.Advance(10 * time.Minute)
	body := string(get(t, s, "/api/v1/calls?per_page=5", 200).body)
	for _, want := range []string{`"id":"10`, `"direction":"Incoming"`, `"connection_type":0.0`} {
		if !strings.Contains(body, want) && !(want == `"direction":"Incoming"` && strings.Contains(body, `"direction":"Outgoing"`)) {
			t.Errorf("calls lack %s: %.300s", want, body)
		}
	}
	for _, absent := range []string{`"meta"`, `"assigned_agent_name"`, `"caller_name"`, `"parallel_call_groups"`, `"recording_to_redact"`, `Z"`} {
		if strings.Contains(body, absent) {
			t.Errorf("calls hold %s under full drift", absent)
		}
	}
	if !regexp.MustCompile(`:\d\d[+-]\d\d:\d\d"`).MatchString(body) {
		t.Errorf("no offsets: %.300s", body)
	}
	m := string(get(t, s, "/api/v1/call_metrics?include=life_cycle&per_page=1000", 200).body)
	if !strings.Contains(m, `"timestamp":`) || strings.Contains(m, `"time_stamp"`) {
		t.Errorf("life_cycle keys: %.300s", m)
	}
}

func TestNoDriftByDefault(t *testing.T) {
	s := newTestSim(t, Config{Backlog: 20})
	body := string(get(t, s, "/api/v1/calls?per_page=20", 200).body)
	for _, absent := range []string{`"id":"`, `"Incoming"`, `"Outgoing"`, `.0,"call_status"`, `+01:00`} {
		if strings.Contains(body, absent) {
			t.Errorf("drift %s without Config.Drift", absent)
		}
	}
	if !strings.Contains(body, `"meta"`) {
		t.Error("meta missing without drift")
	}
}
