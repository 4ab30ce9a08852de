package cursor

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/schemas"

	"github.com/redis/go-redis/v9"
)

// outboxFields are the fields of an outbox stream entry, in lua/commit.lua's
// order; a release before this one stored only the first four.
var outboxFields = [outboxEntryArgs]string{"id", "subject", "data", "headers", "type", "time"}

// FuzzDecodeOutboxEntry checks how a stream entry becomes an event.Committed: no
// panic whatever the fields hold or lack; a record it accepts has an id and a
// subject and, appended again the way Commit appends it, reads back equal; an
// entry of an earlier release (no type field) gets the type and time of its body.
// present has one bit per field of outboxFields: whether the entry holds it.
func FuzzDecodeOutboxEntry(f *testing.F) {
	const all, legacy = 0x3f, 0x0f
	at := "2026-11-24T07:30:01.123456789Z"
	for _, body := range exampleBodies(f) {
		f.Add("1732433401123-0", "e1", "callcenter.acme.call.created", body, `{"traceparent":"00-abc-def-01"}`, "call.created", at, uint8(all))
		f.Add("1-1", "e2", "callcenter.acme.call.ended", body, "{}", "", "", uint8(legacy))
	}
	f.Add("0-0", "odd", "s", "not json", "{}", "", "", uint8(legacy))
	f.Add("18446744073709551615-18446744073709551615", "x", "s", "{}", "null", "t", "2026-11-24T08:30:01+01:00", uint8(all))
	f.Add("1-x", "", "s", "", `{"a":1}`, "", "yesterday", uint8(0x35))
	f.Fuzz(func(t *testing.T, streamID, id, subject, data, headers, typ, at string, present uint8) {
		m := redis.XMessage{ID: streamID, Values: map[string]any{}}
		for i, v := range []string{id, subject, data, headers, typ, at} {
			if present&(1<<i) != 0 {
				m.Values[outboxFields[i]] = v
			}
		}
		r, err := toRecord(m)
		requireRawSame(t, m, r, err)
		if err != nil {
			return
		}
		if r.ID == "" || r.Subject == "" || r.StreamID != streamID {
			t.Fatalf("entry %v read as %+v: want its stream id, an id and a subject", m, r)
		}
		if _, stored := m.Values["type"]; !stored {
			requireHeadOfBody(t, r)
			return
		}
		requireReappends(t, r)
	})
}

// exampleBodies are the published example events, compacted as a stream holds them.
func exampleBodies(f *testing.F) []string {
	var out []string
	for name, b := range schemas.Examples() {
		var e events.Envelope
		if err := json.Unmarshal(b, &e); err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		body, _ := json.Marshal(e)
		out = append(out, string(body))
	}
	return out
}

// requireHeadOfBody fails unless a record of an earlier release has the type and
// time of its body when the body is an envelope.
func requireHeadOfBody(t *testing.T, r event.Committed) {
	t.Helper()
	var e events.Envelope
	if json.Unmarshal(r.Data, &e) != nil {
		return
	}
	if r.Type != e.Type || !r.Time.Equal(e.Time) {
		t.Fatalf("entry without type read as %q %v, its body says %q %v", r.Type, r.Time, e.Type, e.Time)
	}
}

// requireReappends fails unless r, appended as Commit appends it and read back,
// is the same record.
func requireReappends(t *testing.T, r event.Committed) {
	t.Helper()
	args, err := appendOutboxEntry(nil, r.Message)
	if err != nil {
		t.Fatalf("record %+v does not append: %v", r, err)
	}
	m := redis.XMessage{ID: r.StreamID, Values: map[string]any{}}
	for i, name := range outboxFields {
		m.Values[name] = args[i]
	}
	if b, ok := m.Values["data"].([]byte); ok {
		m.Values["data"] = string(b) // Redis hands every field back as a string
	}
	back, err := toRecord(m)
	if err != nil {
		t.Fatalf("record %+v appended as %v does not read back: %v", r, m.Values, err)
	}
	if !sameRecord(r, back) {
		t.Fatalf("record %+v\nreads back as %+v", r, back)
	}
}

func sameRecord(a, b event.Committed) bool {
	if len(a.Headers) == 0 && len(b.Headers) == 0 {
		a.Headers, b.Headers = nil, nil
	}
	if !a.Time.Equal(b.Time) || !a.CommittedAt.Equal(b.CommittedAt) {
		return false
	}
	a.Time, b.Time, a.CommittedAt, b.CommittedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

// requireRawSame fails unless m, read from XRANGE's raw reply (ReadOutbox), reads
// as go-redis's reading of it did (WaitOutbox): r, or an error.
func requireRawSame(t *testing.T, m redis.XMessage, r event.Committed, err error) {
	t.Helper()
	recs, rerr := decodeXRange(rawXRange([]redis.XMessage{m}, outboxFields[:]))
	if (err != nil) != (rerr != nil) {
		t.Fatalf("entry %v: error %v, read raw: %v", m, err, rerr)
	}
	if err == nil && (len(recs) != 1 || !sameRecord(recs[0], r)) {
		t.Fatalf("entry %v read as %+v, read raw as %+v", m, r, recs)
	}
}
