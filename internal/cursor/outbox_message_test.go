package cursor

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/redis/go-redis/v9"
)

// Type, time and headers come back as they were committed, with the commit time
// of each entry taken from its stream id.
func TestOutboxKeepsTheMessage(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	at := time.Date(2026, 11, 24, 7, 30, 1, 123456789, time.UTC)
	start := time.Now()
	ids := mustCommit(t, e.store, l, Batch{Events: []event.Message{
		{ID: "e1", Subject: "callcenter.acme.call.created", Type: events.CallCreated, Time: at, Data: []byte(`{}`),
			Headers: map[string]string{"traceparent": "00-abc-def-01"}},
		{ID: "e2", Subject: "callcenter.acme.call.ended", Data: []byte(`{"type":"call.ended"}`)}, // no type, no time: kept so
	}}).StreamIDs
	read, err := e.store.ReadOutbox(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	waited, err := e.store.WaitOutbox(ctx, "", 10, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for name, recs := range map[string][]event.Committed{"ReadOutbox": read, "WaitOutbox": waited} {
		if len(recs) != 2 {
			t.Fatalf("%s: %d records, want 2", name, len(recs))
		}
		r := recs[0]
		if r.Type != events.CallCreated || !r.Time.Equal(at) || r.Headers["traceparent"] != "00-abc-def-01" {
			t.Errorf("%s: %+v, want type %s, time %v and the traceparent", name, r, events.CallCreated, at)
		}
		if id, _ := parseStreamID(ids[0]); !r.CommittedAt.Equal(id.time()) || r.CommittedAt.Before(start.Add(-time.Second)) {
			t.Errorf("%s: committed at %v, want %v (stream id %s)", name, r.CommittedAt, id.time(), ids[0])
		}
		if recs[1].Type != "" || !recs[1].Time.IsZero() {
			t.Errorf("%s: an entry committed without type and time read as %q %v", name, recs[1].Type, recs[1].Time)
		}
	}
}

// Entries appended by a release that stored only id, subject, data and headers
// are still read and relayed: their type and time come from the body, or stay
// zero when the body does not say.
func TestOutboxReadsEntriesOfEarlierReleases(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	env, err := event.New("acme", events.CallEnded, "calls/812", "k1", time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), map[string]int{"id": 812})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(env)
	for _, v := range [][]any{
		{"id", env.ID, "subject", "callcenter.acme.call.ended", "data", body, "headers", `{"traceparent":"00-1-2-01"}`},
		{"id", "odd", "subject", "callcenter.acme.call.ended", "data", "not json", "headers", "{}"},
	} {
		if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.store.k.outbox, Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := e.store.ReadOutbox(ctx, "", 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("ReadOutbox = %d records, %v; want both entries", len(recs), err)
	}
	if r := recs[0]; r.ID != env.ID || r.Type != events.CallEnded || !r.Time.Equal(env.Time) ||
		string(r.Data) != string(body) || r.Headers["traceparent"] != "00-1-2-01" {
		t.Errorf("old entry read as %+v, want type and time from its body", r)
	}
	if r := recs[1]; r.ID != "odd" || r.Type != "" || !r.Time.IsZero() || string(r.Data) != "not json" {
		t.Errorf("old entry with a body that is no envelope read as %+v, want it as it is", r)
	}
}
