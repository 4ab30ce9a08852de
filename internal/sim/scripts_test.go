package sim

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// callStory is the status, assignment and billing lines of calls and their participants, as compact strings
// "+offset entity change field from→to" with participants named by their role.
func callStory(lines []TruthLine, start time.Time, names map[int64]string, calls ...int64) []string {
	in := map[int64]bool{}
	for _, c := range calls {
		in[c] = true
	}
	var out []string
	for _, l := range lines {
		var who string
		switch {
		case l.Entity == entCall && in[l.ID]:
			who = names[l.ID]
		case l.Entity == entParticipant && in[l.CallID]:
			who = names[l.ID]
		default:
			continue
		}
		switch l.Field {
		case "", "call_status", "assigned_agent_id", "bill_duration":
		default:
			continue // the random wrap-up (recording, notes, …) and leg details
		}
		s := fmt.Sprintf("+%s %s %s", l.Time.Sub(start), who, l.Change)
		if l.Field != "" {
			s += " " + l.Field
		}
		if l.To != nil {
			s += " " + string(l.From) + "→" + string(l.To)
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

func TestScriptTransferThenAbandon(t *testing.T) {
	var truth bytes.Buffer
	s := newTestSim(t, Config{Truth: &truth, CallRate: -1})
	start := s.Now()
	callC, err := s.ScriptTransferThenAbandon()
	if err != nil {
		t.Fatal(err)
	}
	s.Advance(ScriptDuration + 10*time.Minute)
	children := s.ChildCalls(callC)
	if len(children) != 1 {
		t.Fatalf("children of %d: %v, want one", callC, children)
	}
	callD := children[0]
	d := get(t, s, fmt.Sprintf("/api/v1/calls/%d", callD), 200).obj(t)
	if num(t, d["parent_call_id"]) != callC {
		t.Errorf("child parent_call_id %v, want %d", d["parent_call_id"], callC)
	}
	parts := d["participants"].([]any)
	c := get(t, s, fmt.Sprintf("/api/v1/calls/%d", callC), 200).obj(t)
	cparts := c["participants"].([]any)
	if len(parts) != 2 || len(cparts) != 2 {
		t.Fatalf("participants: C %d, D %d; want 2 and 2", len(cparts), len(parts))
	}
	names := map[int64]string{callC: "C", callD: "D"}
	for i, p := range cparts {
		names[num(t, p.(map[string]any)["id"])] = []string{"C.customer", "C.agentA"}[i]
	}
	for i, p := range parts {
		names[num(t, p.(map[string]any)["id"])] = []string{"D.customer", "D.agentB"}[i]
	}
	if ct := num(t, parts[1].(map[string]any)["connection_type"]); ct != 4 {
		t.Errorf("B's connection_type %d, want 4 (cold transfer)", ct)
	}
	_ = s.Close()
	got := callStory(parseTruth(t, truth.Bytes()), start, names, callC, callD)
	want := []string{
		"+0s C created",
		"+0s C.customer joined →13",
		"+2s C.customer status_changed call_status 13→6",
		"+5s C.agentA joined →13",
		"+5s C updated assigned_agent_id null→" + fmt.Sprint(d["assigned_agent_id"]),
		"+12s C.agentA status_changed call_status 13→8",
		"+12s C.customer status_changed call_status 6→8",
		"+1m0s D created",
		"+1m0s D.customer joined →13",
		"+1m0s D.agentB joined →13",
		"+1m0s D updated assigned_agent_id null→" + fmt.Sprint(d["assigned_agent_id"]),
		"+1m0s C.customer status_changed call_status 8→1",
		"+1m0s C.agentA status_changed call_status 8→1",
		"+1m0s C updated bill_duration 0→55", // talk 48 + ringing 7,
		"+1m0s C ended",
		"+1m15s D.customer status_changed call_status 13→17",
		"+1m15s D.agentB status_changed call_status 13→3",
		"+1m15s D ended",
	}
	// A's id is not known up front: patch the one line that names it.
	want[4] = "+5s C updated assigned_agent_id null→" + fmt.Sprint(c["assigned_agent_id"])
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("story:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m := get(t, s, fmt.Sprintf("/api/v1/calls/%d/call_metrics", callC), 200).obj(t)
	if m["csat"].(map[string]any)["transfer_made"] != true {
		t.Errorf("C's metric csat.transfer_made %v, want true", m["csat"])
	}
}

func TestScriptStatusFlips(t *testing.T) {
	var truth bytes.Buffer
	s := newTestSim(t, Config{Truth: &truth, CallRate: -1})
	start := s.Now()
	const uid = 5
	if err := s.ScriptStatusFlips(uid, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.ScriptStatusFlips(9999, 1); err == nil {
		t.Error("unknown user: no error")
	}
	s.Advance(45 * time.Second)
	_ = s.Close()
	var prefs, statuses []string
	for _, l := range parseTruth(t, truth.Bytes()) {
		if l.Entity != entUser || l.ID != uid || l.Change != chStatusChanged {
			continue
		}
		s := fmt.Sprintf("+%s %s→%s", l.Time.Sub(start), l.From, l.To)
		switch l.Field {
		case "preference":
			prefs = append(prefs, s)
		case "status":
			statuses = append(statuses, s)
		}
	}
	if len(prefs) != 4 {
		t.Fatalf("preference changes %v, want 4", prefs)
	}
	if len(statuses) != 4 {
		t.Fatalf("status changes %v, want 4 (the user is idle)", statuses)
	}
	for i := range 4 {
		if !strings.HasPrefix(prefs[i], fmt.Sprintf("+%ds ", 10*(i+1))) || prefs[i][strings.Index(prefs[i], " "):] != statuses[i][strings.Index(statuses[i], " "):] {
			t.Errorf("flip %d: preference %s, status %s", i, prefs[i], statuses[i])
		}
	}
}

func TestScriptAnsweredCallBusyThenACW(t *testing.T) {
	s := newTestSim(t, Config{CallRate: -1})
	id, err := s.ScriptAnsweredCall()
	if err != nil {
		t.Fatal(err)
	}
	s.Advance(20 * time.Second)
	c := get(t, s, fmt.Sprintf("/api/v1/calls/%d", id), 200).obj(t)
	agent := num(t, c["assigned_agent_id"])
	u := get(t, s, fmt.Sprintf("/api/v1/users/%d", agent), 200).obj(t)
	if num(t, u["status"]) != 2 {
		t.Errorf("agent status %v during the call, want 2", u["status"])
	}
	s.Advance(55 * time.Second)
	u = get(t, s, fmt.Sprintf("/api/v1/users/%d", agent), 200).obj(t)
	if num(t, u["status"]) != 3 {
		t.Errorf("agent status %v after hang-up, want 3", u["status"])
	}
	s.Advance(5 * time.Minute)
	m := get(t, s, fmt.Sprintf("/api/v1/calls/%d/call_metrics?include=life_cycle", id), 200).obj(t)
	if num(t, m["talk_time"]) != 60 || num(t, m["total_ringing_time"]) != 6 || num(t, m["answering_speed"]) != 8 {
		t.Errorf("metric %v: want talk 60, ringing 6, answering speed 8", m)
	}
	if m["updated_time"] == m["created_time"] || len(m["life_cycle"].([]any)) < 5 {
		t.Errorf("metric not finalized: %v", m)
	}
}
