package sim

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// busySim is a world with an hour of calls and a backlog.
func busySim(t *testing.T, cfg Config) *Sim {
	t.Helper()
	cfg.Backlog = 200
	s := newTestSim(t, cfg)
	s.Advance(time.Hour)
	return s
}

func TestListCalls(t *testing.T) {
	s := busySim(t, Config{})
	total := int64(s.Stats().Calls)
	r := get(t, s, "/api/v1/calls", 200).obj(t)
	calls := r["calls"].([]any)
	meta := r["meta"].(map[string]any)
	if len(calls) != 10 || num(t, meta["total_count"]) != total || num(t, meta["current"]) != 1 ||
		num(t, meta["total_pages"]) != (total+9)/10 {
		t.Fatalf("%d calls, meta %v, total %d", len(calls), meta, total)
	}
	c := calls[0].(map[string]any)
	for _, k := range []string{"id", "direction", "parent_call_id", "root_call_id", "phone_number_id", "phone_number",
		"assigned_agent_id", "assigned_agent_name", "assigned_team_id", "assigned_team_name", "assigned_call_queue_id",
		"assigned_call_queue_name", "assigned_ivr_id", "assigned_ivr_name", "call_notes", "bill_duration",
		"bill_duration_unit", "created_time", "updated_time", "recording", "recording_to_redact",
		"integrated_resources", "participants", "parallel_call_groups"} {
		if _, ok := c[k]; !ok {
			t.Errorf("call lacks %s", k)
		}
	}
	if d := c["direction"]; d != "incoming" && d != "outgoing" {
		t.Errorf("direction %v", d)
	}
	p := c["participants"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "call_id", "caller_id", "caller_number", "caller_name", "participant_id",
		"participant_type", "connection_type", "call_status", "duration", "duration_unit", "enqueued_time", "cost",
		"cost_unit", "created_time", "updated_time"} {
		if _, ok := p[k]; !ok {
			t.Errorf("participant lacks %s", k)
		}
	}
	last := get(t, s, fmt.Sprintf("/api/v1/calls?per_page=1000&page=%d", (total+999)/1000), 200).obj(t)
	if n := int64(len(last["calls"].([]any))); n != total-(total-1)/1000*1000 {
		t.Errorf("last page holds %d of %d", n, total)
	}
}

func TestCallsByTime(t *testing.T) {
	s := busySim(t, Config{Order: OldestFirst})
	all := get(t, s, "/api/v1/calls?per_page=1000", 200).obj(t)["calls"].([]any)
	pivot := all[len(all)/2].(map[string]any)
	at := pivot["created_time"].(string)
	q := func(from, to string) []any {
		v := url.Values{}
		if from != "" {
			v.Set("by_time[from]", from)
		}
		if to != "" {
			v.Set("by_time[to]", to)
		}
		return get(t, s, "/api/v1/calls?per_page=1000&"+v.Encode(), 200).obj(t)["calls"].([]any)
	}
	from := q(at, "")
	if first := from[0].(map[string]any); first["created_time"] != at {
		t.Errorf("from %s is not inclusive: first created %v", at, first["created_time"])
	}
	to := q("", at)
	for _, c := range to {
		if c.(map[string]any)["created_time"].(string) >= at {
			t.Fatalf("to %s is not exclusive: %v", at, c)
		}
	}
	if len(from)+len(to) != len(all) {
		t.Errorf("from %d + to %d != all %d", len(from), len(to), len(all))
	}
	atPlus := strings.Replace(mustParse(t, at).In(time.FixedZone("", 3600)).Format(time.RFC3339), "+", " ", 1)
	if got := q(atPlus, ""); len(got) != len(from) {
		t.Errorf("offset with '+' decoded as space: %d calls, want %d", len(got), len(from))
	}
	wantError(t, do(t, s, "GET", "/api/v1/calls?by_time[from]=yesterday", testKey, nil), 422, "model_validation_failed", "by_time[from]")
	wantError(t, do(t, s, "GET", "/api/v1/calls?by_time[from]="+url.QueryEscape(at)+"&by_time[to]="+url.QueryEscape(at), testKey, nil),
		422, "model_validation_failed", "by_time[from]")

	ignoring := busySim(t, Config{CallsIgnoreByTime: true})
	if n := len(get(t, ignoring, "/api/v1/calls?per_page=1000&by_time[from]="+url.QueryEscape(at), 200).obj(t)["calls"].([]any)); n != len(all) {
		t.Errorf("CallsIgnoreByTime: %d calls, want all %d", n, len(all))
	}
}

func mustParse(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestGetCall(t *testing.T) {
	s := busySim(t, Config{})
	c := get(t, s, fmt.Sprintf("/api/v1/calls/%d", callBase+3), 200).obj(t)
	if num(t, c["id"]) != callBase+3 {
		t.Errorf("call %v", c["id"])
	}
	m := wantError(t, do(t, s, "GET", "/api/v1/calls/5", testKey, nil), 404, "record_not_found")
	if !strings.Contains(m["message"].(string), "Call") {
		t.Errorf("message %v", m["message"])
	}
}

func TestCallMetrics(t *testing.T) {
	s := busySim(t, Config{Order: OldestFirst})
	l := get(t, s, "/api/v1/call_metrics", 200).obj(t)["call_metrics"].([]any)
	if len(l) != 10 {
		t.Fatalf("%d metrics", len(l))
	}
	m := l[0].(map[string]any)
	if _, ok := m["life_cycle"]; ok {
		t.Error("life_cycle present without include")
	}
	for _, k := range []string{"id", "call_id", "created_time", "updated_time", "ivr_time", "ivr_time_unit",
		"hold_duration", "call_work_time", "total_ringing_time", "talk_time", "answering_speed",
		"recording_duration", "bill_duration", "cost", "cost_unit", "csat", "tags"} {
		if _, ok := m[k]; !ok {
			t.Errorf("metric lacks %s", k)
		}
	}
	withLife := get(t, s, "/api/v1/call_metrics?include=life_cycle", 200).obj(t)["call_metrics"].([]any)
	lc, ok := withLife[0].(map[string]any)["life_cycle"].([]any)
	if !ok || len(lc) == 0 {
		t.Fatalf("life_cycle missing with include: %v", withLife[0])
	}
	ev := lc[0].(map[string]any)
	if _, ok := ev["time_stamp"]; !ok || ev["type"] == nil {
		t.Errorf("life-cycle event %v", ev)
	}
	c := get(t, s, fmt.Sprintf("/api/v1/calls/%d", num(t, m["call_id"])), 200).obj(t)
	if c["created_time"] != m["created_time"] {
		t.Errorf("metric created %v, call created %v", m["created_time"], c["created_time"])
	}
	from := m["created_time"].(string)
	to := mustParse(t, from).Add(10 * time.Minute).Format(time.RFC3339)
	win := get(t, s, "/api/v1/call_metrics?per_page=1000&by_time[from]="+url.QueryEscape(from)+"&by_time[to]="+url.QueryEscape(to), 200).obj(t)["call_metrics"].([]any)
	if len(win) == 0 || win[0].(map[string]any)["created_time"] != from {
		t.Errorf("window from %s: first %v", from, win)
	}
	for _, x := range win {
		if ct := x.(map[string]any)["created_time"].(string); ct < from || ct >= to {
			t.Errorf("metric created %s outside [%s, %s)", ct, from, to)
		}
	}
	wantError(t, do(t, s, "GET", "/api/v1/call_metrics?by_time[from]="+url.QueryEscape(from), testKey, nil), 422, "model_validation_failed", "by_time[to]")
	wantError(t, do(t, s, "GET", "/api/v1/call_metrics?include=participants", testKey, nil), 422, "model_validation_failed", "include")

	one := get(t, s, fmt.Sprintf("/api/v1/calls/%d/call_metrics", num(t, m["call_id"])), 200).obj(t)
	if one["id"] != m["id"] {
		t.Errorf("single metric %v, listed %v", one["id"], m["id"])
	}
	wantError(t, do(t, s, "GET", "/api/v1/calls/1/call_metrics", testKey, nil), 404, "record_not_found")
}

func TestRecordings(t *testing.T) {
	s := busySim(t, Config{})
	var cid, rid int64
	for _, x := range get(t, s, "/api/v1/calls?per_page=1000", 200).obj(t)["calls"].([]any) {
		c := x.(map[string]any)
		if rec, ok := c["recording"].(map[string]any); ok {
			cid, rid = num(t, c["id"]), num(t, rec["id"])
			if !strings.HasSuffix(rec["url"].(string), fmt.Sprintf("/api/v1/calls/%d/recording/%d", cid, rid)) {
				t.Errorf("recording url %v", rec["url"])
			}
			break
		}
	}
	if cid == 0 {
		t.Fatal("no call with a recording")
	}
	path := fmt.Sprintf("/api/v1/calls/%d/recording/%d", cid, rid)
	r := do(t, s, "GET", path, testKey, nil)
	if r.code != 302 || len(r.body) != 0 {
		t.Fatalf("download: %d %q", r.code, r.body)
	}
	loc, err := url.Parse(r.header.Get("Location"))
	if err != nil || loc.Path != fmt.Sprintf("/recordings/%d.mp3", rid) {
		t.Fatalf("location %q", r.header.Get("Location"))
	}
	if f := do(t, s, "GET", loc.Path, "", nil); f.code != 200 || len(f.body) == 0 {
		t.Errorf("file: %d", f.code)
	}
	wantError(t, do(t, s, "GET", fmt.Sprintf("/api/v1/calls/%d/recording/%d", cid, rid+1000), testKey, nil), 404, "record_not_found")
	del := do(t, s, "DELETE", path, testKey, nil)
	if del.code != 200 || string(del.body) != `{"status":true}` {
		t.Fatalf("delete: %d %s", del.code, del.body)
	}
	m := wantError(t, do(t, s, "DELETE", path, testKey, nil), 404, "record_not_found")
	if !strings.Contains(m["message"].(string), fmt.Sprint(rid)) {
		t.Errorf("message %v", m["message"])
	}
	wantError(t, do(t, s, "GET", path, testKey, nil), 404, "record_not_found")
	if c := get(t, s, fmt.Sprintf("/api/v1/calls/%d", cid), 200).obj(t); c["recording"] != nil {
		t.Errorf("recording after delete: %v", c["recording"])
	}
	if f := do(t, s, "GET", loc.Path, "", nil); f.code != 404 {
		t.Errorf("deleted file: %d", f.code)
	}
}
