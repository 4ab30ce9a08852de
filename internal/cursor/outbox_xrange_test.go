package cursor

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
)

// rawXRange is the RESP reply of XRANGE holding msgs, fields in the order given.
func rawXRange(msgs []redis.XMessage, order []string) []byte {
	bulk := func(b []byte, s string) []byte { return fmt.Appendf(b, "$%d\r\n%s\r\n", len(s), s) }
	b := fmt.Appendf(nil, "*%d\r\n", len(msgs))
	for _, m := range msgs {
		b = bulk(fmt.Appendf(b, "*2\r\n"), m.ID)
		b = fmt.Appendf(b, "*%d\r\n", 2*len(m.Values))
		for _, name := range order {
			if v, ok := m.Values[name]; ok {
				b = bulk(bulk(b, name), v.(string))
			}
		}
	}
	return b
}

// The raw reading of XRANGE gives what go-redis's reading gives, entry by entry
// (FuzzDecodeOutboxEntry compares them on every entry it makes up).
func TestDecodeXRangeAsGoRedis(t *testing.T) {
	msgs := []redis.XMessage{
		{ID: "1732433401123-0", Values: map[string]any{"id": "e1", "subject": "callcenter.acme.call.created", "data": `{"a":1}`,
			"headers": `{"traceparent":"00-abc-def-01","tracestate":"x=1"}`, "type": "call.created", "time": "2026-11-24T07:30:01.123456789Z"}},
		{ID: "1732433401123-1", Values: map[string]any{"id": "e2", "subject": "callcenter.acme.call.created", "data": "",
			"headers": "{}", "type": "call.created", "time": ""}},
		{ID: "1732433401124-0", Values: map[string]any{"id": "e3", "subject": "callcenter.acme.call.ended", "data": `{"type":"call.ended"}`, "headers": `{"k":"\u00e9\n"}`}},
	}
	got, err := decodeXRange(rawXRange(msgs, outboxFields[:]))
	if err != nil {
		t.Fatal(err)
	}
	want, err := toRecords(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !sameRecord(got[i], want[i]) {
			t.Errorf("entry %d read as %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[0].Subject != got[1].Subject || got[1].Type != events.CallCreated {
		t.Errorf("subjects %q %q, type %q", got[0].Subject, got[1].Subject, got[1].Type)
	}
}

// A reply that is not what XRANGE answers is an error, never a panic or a
// record made of half an entry.
func TestDecodeXRangeRefusesOtherReplies(t *testing.T) {
	whole := string(rawXRange([]redis.XMessage{{ID: "1-1", Values: map[string]any{"id": "e", "subject": "s", "data": "{}"}}}, outboxFields[:]))
	for _, raw := range []string{
		"", "*1\r\n", ":1\r\n", "*1\r\n*3\r\n", "*1\r\n*2\r\n$3\r\n1-1\r\n*1\r\n",
		whole[:len(whole)-1], whole + "+OK\r\n", "*1\r\n*2\r\n$30\r\n1-1\r\n*0\r\n", "*x\r\n", "*-2\r\n",
	} {
		if recs, err := decodeXRange([]byte(raw)); !errors.Is(err, errReplyShape) {
			t.Errorf("decodeXRange(%q) = %v, %v; want errReplyShape", raw, recs, err)
		}
	}
	for _, raw := range []string{"*0\r\n", "*-1\r\n", "_\r\n"} {
		if recs, err := decodeXRange([]byte(raw)); err != nil || len(recs) != 0 {
			t.Errorf("decodeXRange(%q) = %v, %v; want no records", raw, recs, err)
		}
	}
}

// An error reply is left to go-redis's reading, which reports it (and follows a
// Cluster's redirections).
func TestReadOutboxErrorReply(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	if err := e.rdb.Set(ctx, e.store.k.outbox, "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.ReadOutbox(ctx, "", 10); err == nil || !isWrongType(err) {
		t.Fatalf("ReadOutbox of a string key = %v, want WRONGTYPE", err)
	}
}

func isWrongType(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && len(re.Error()) > 9 && re.Error()[:9] == "WRONGTYPE"
}

// Reading a large outbox twice: the second read's buffer is sized by the first.
func TestReadOutboxLarge(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	var b Batch
	for i := range 300 {
		b.Events = append(b.Events, event.Message{ID: "e" + strconv.Itoa(i), Subject: "s", Data: make([]byte, 3000+i)})
	}
	mustCommit(t, e.store, l, b)
	for range 2 {
		recs, err := e.store.ReadOutbox(ctx, "", 1000)
		if err != nil || len(recs) != 300 {
			t.Fatalf("ReadOutbox = %d records, %v", len(recs), err)
		}
		for i, r := range recs {
			if len(r.Data) != 3000+i || cap(r.Data) != len(r.Data) {
				t.Fatalf("record %d: data of %d bytes (capacity %d), want %d", i, len(r.Data), cap(r.Data), 3000+i)
			}
		}
	}
}

// decodeHeaders reads what json.Unmarshal reads, and fails where it fails.
func FuzzDecodeHeaders(f *testing.F) {
	for _, s := range []string{`{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`,
		`{"a":"1","b":"2"}`, `{"a":"1","a":"2"}`, `{"a":"\u003c"}`, `{"a":"é"}`, `{"a":1}`, `{"a":"1",}`, `{ "a":"1"}`,
		`{"":""}`, `null`, `{}`, ``, `{"a":"1"}}`, `{"a":"1"`, `{"a""1"}`, `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := decodeHeaders([]byte(s))
		if s == "" || s == "{}" {
			if got != nil || err != nil {
				t.Fatalf("decodeHeaders(%q) = %v, %v; want none", s, got, err)
			}
			return
		}
		var want map[string]string
		werr := json.Unmarshal([]byte(s), &want)
		if (err != nil) != (werr != nil) || err == nil && (!maps.Equal(got, want) || (got == nil) != (want == nil)) {
			t.Fatalf("decodeHeaders(%q) = %#v, %v; json.Unmarshal: %#v, %v", s, got, err, want, werr)
		}
	})
}
