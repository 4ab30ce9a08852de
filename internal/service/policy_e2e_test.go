package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/policy"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

const policyKey = "e2e-policy-key-9b1f0c27d4"

// The no_personal_data preset end to end: none of the personal values the API
// served (the simulator's truth, read raw from it) is in the stream, in Redis
// (every key and value), in the poller's logs, on /metrics, on /status or in a
// trace export; every event validates against its schema and carries the
// policy's version; the audit's one-per-call and chain checks hold; the same
// caller hashes the same across calls.
func TestNoPersonalDataEndToEnd(t *testing.T) {
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	w := newWorld(t, func(c *sim.Config) { c.Backlog = 300 }) // customers call again: joins to check
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(policy.Rules{Preset: policy.PresetNoPersonalData}, secret.New(policyKey), "acme")
	if err != nil {
		t.Fatal(err)
	}
	set := testSettings(w, ns.URL(), rs.URL, "policy-1")
	set.DataPolicy, set.HTTPAddr = pol, simtest.FreeAddr(t)
	logs := &simtest.Buffer{}
	sr := tracetest.NewSpanRecorder()
	svc := start(t, w, set, zerolog.New(logs).Level(zerolog.DebugLevel),
		WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))))
	svc.advance(t, 90) // fifteen simulated minutes
	caughtUp(t, svc.cycles, store)
	pages := map[string]string{"/metrics": get(t, set.HTTPAddr, "/metrics"), "/status": get(t, set.HTTPAddr, "/status"),
		"/status?format=json": get(t, set.HTTPAddr, "/status?format=json")}
	truth := personalTruth(t, w.URL)
	svc.stop(t)

	if len(truth.values) < 50 || len(truth.joins) == 0 {
		t.Fatalf("the world served %d personal values, %d callers on several calls: too few to test", len(truth.values), len(truth.joins))
	}
	var spans bytes.Buffer
	for _, s := range sr.Ended() {
		fmt.Fprintf(&spans, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Events(), s.Status())
	}
	msgs := readStream(t, ns)
	var stream bytes.Buffer
	for _, m := range msgs {
		stream.Write(m.Body)
		fmt.Fprintln(&stream, m.Header)
	}
	sources := map[string][]byte{"stream": stream.Bytes(), "redis": dumpRedis(t, rs.Client(t)), "logs": logs.Bytes(), "traces": spans.Bytes()}
	for name, page := range pages {
		sources[name] = []byte(page)
	}
	for name, b := range sources {
		if len(b) == 0 {
			t.Errorf("%s: empty, nothing scanned", name)
		}
		for _, v := range truth.values {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds the personal value %q", name, v)
			}
		}
		if bytes.Contains(b, []byte(policyKey)) {
			t.Errorf("%s holds the hashing key", name)
		}
	}
	if !strings.Contains(pages["/status"], pol.Version()) {
		t.Errorf("/status does not show the policy version %s", pol.Version())
	}
	if !strings.Contains(pages["/metrics"], `callbus_policy_fields_total{account="acme",action="hash",field="calls.participants[].caller_number"}`) {
		t.Errorf("/metrics lacks the count of hashed caller numbers")
	}

	r := auditStream(t, ns, w, false) // envelopes, ids, chains, one per call, schemas, the truth's statuses
	for _, p := range r.Problems {
		t.Error(p)
	}
	joined := map[int64]string{} // call id → the customer's caller_number as published
	for _, m := range msgs {
		if m.Event.Policy != pol.Version() {
			t.Fatalf("%s %s carries policy %q, want %q", m.Event.Type, m.Event.Subject, m.Event.Policy, pol.Version())
		}
		var d events.ParticipantData
		if m.Event.Type == events.ParticipantJoined && json.Unmarshal(m.Event.Data, &d) == nil && d.Participant.CallerNumber != nil {
			joined[d.Participant.CallID] = *d.Participant.CallerNumber
		}
	}
	checked := 0
	for number, calls := range truth.joins {
		var seen []string
		for _, id := range calls {
			if h, ok := joined[id]; ok {
				seen = append(seen, h)
			}
		}
		if len(seen) < 2 {
			continue
		}
		checked++
		for _, h := range seen {
			if h != seen[0] || h != pol.HashValue(number) {
				t.Errorf("caller of calls %v published as %v: the same caller must hash the same", calls, seen)
				break
			}
		}
	}
	if checked == 0 {
		t.Error("no caller published on two calls: the join is untested")
	}
	t.Logf("%d messages %v; %d personal values looked for in %d sources; %d callers joined across calls",
		len(msgs), r.ByType, len(truth.values), len(sources), checked)
}

// truthValues are the personal values an API served, and for each caller
// number the calls it was on.
type truthValues struct {
	values []string
	joins  map[string][]int64
}

// personalTruth reads every user and call raw from the API at base and keeps
// the values of its personal fields (those of 6 characters or more: shorter
// ones match by chance).
func personalTruth(t *testing.T, base string) truthValues {
	t.Helper()
	tv := truthValues{joins: map[string][]int64{}}
	seen := map[string]bool{}
	add := func(v *string) {
		if v != nil && len(*v) >= 6 && !seen[*v] {
			seen[*v] = true
			tv.values = append(tv.values, *v)
		}
	}
	var users []events.User
	apiGet(t, base+"/api/v1/users?per_page=1000", &users)
	for i := range users {
		add(&users[i].Name)
		add(&users[i].Email)
		add(&users[i].Phone)
	}
	for page := 1; ; page++ {
		var body struct{ Calls []events.Call }
		apiGet(t, fmt.Sprintf("%s/api/v1/calls?per_page=1000&page=%d", base, page), &body)
		for _, c := range body.Calls {
			add(c.AssignedAgentName)
			add(&c.CallNotes)
			if c.Recording != nil {
				add(&c.Recording.URL)
				add(c.Recording.TranscriptionURL)
			}
			if c.RecordingToRedact != nil {
				add(&c.RecordingToRedact.URL)
			}
			for _, p := range c.Participants {
				add(p.CallerNumber)
				add(p.CallerName)
				if p.CallerNumber != nil {
					tv.joins[*p.CallerNumber] = append(tv.joins[*p.CallerNumber], c.ID)
				}
			}
		}
		if len(body.Calls) < 1000 {
			break
		}
	}
	for n, calls := range tv.joins {
		if len(calls) < 2 {
			delete(tv.joins, n)
		}
	}
	return tv
}

func apiGet(t *testing.T, url string, v any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	req.Header.Set("X-Api-Auth", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func get(t *testing.T, addr, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// dumpRedis writes every key of the server and its value, whatever its type.
func dumpRedis(t *testing.T, rdb *redis.Client) []byte {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	var out bytes.Buffer
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		fmt.Fprintf(&out, "%s: ", key)
		var v any
		var err error
		switch typ := rdb.Type(ctx, key).Val(); typ {
		case "string":
			v, err = rdb.Get(ctx, key).Result()
		case "hash":
			v, err = rdb.HGetAll(ctx, key).Result()
		case "zset":
			v, err = rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
		case "set":
			v, err = rdb.SMembers(ctx, key).Result()
		case "list":
			v, err = rdb.LRange(ctx, key, 0, -1).Result()
		case "stream":
			v, err = rdb.XRange(ctx, key, "-", "+").Result()
		default:
			v = typ
		}
		if err != nil {
			t.Fatalf("redis %s: %v", key, err)
		}
		fmt.Fprintf(&out, "%v\n", v)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// History under the no_personal_data preset: the calls a backfill announces
// from the account export (callcenter.DecodeRecord) hold no personal value (no
// customer number, agent name, note or caller name of the world's pools) in the
// stream or in Redis, and carry the policy's version; the audit holds.
func TestNoPersonalDataInHistory(t *testing.T) {
	b := newHistoryBed(t, redistest.Start(t), nil)
	b.exportFirst()
	pol, err := policy.New(policy.Rules{Preset: policy.PresetNoPersonalData}, secret.New(policyKey), "acme")
	if err != nil {
		t.Fatal(err)
	}
	b.set.DataPolicy = pol
	r := start(t, b.w, b.set, b.log, quickJobs)
	b.cursor(t, "backfill.done", 60*time.Second)
	// History calls are served by the export only; the simulator draws their
	// agents, notes and callers from the pools of the live calls: every
	// customer's number starts +1212555.
	values := append(personalTruth(t, b.w.URL).values, "+1212555")
	b.settle(t, r)
	ids := b.w.Sim.HistoryCallIDs()
	if len(values) < 50 {
		t.Fatalf("%d personal values: too few to test", len(values))
	}
	msgs := readStream(t, b.ns)
	var stream bytes.Buffer
	history := 0
	for _, m := range msgs {
		stream.Write(m.Body)
		if m.Event.History {
			history++
		}
		if m.Event.Policy != pol.Version() {
			t.Fatalf("%s %s carries policy %q, want %q", m.Event.Type, m.Event.Subject, m.Event.Policy, pol.Version())
		}
	}
	if history == 0 {
		t.Fatal("no history event: the export path is untested")
	}
	redisDump := dumpRedis(t, b.rs.Client(t))
	for _, v := range values {
		if bytes.Contains(stream.Bytes(), []byte(v)) || bytes.Contains(redisDump, []byte(v)) {
			t.Errorf("the personal value %q of a history call is in the stream or Redis", v)
		}
	}
	b.audit(t, ids)
	t.Logf("%d messages, %d from history (%d history calls); %d personal values looked for", len(msgs), history, len(ids), len(values))
}
