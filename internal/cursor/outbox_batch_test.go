package cursor

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/redis/go-redis/v9"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
)

// A batch entry's events come back as they were committed, small (plain) or
// large (compressed) alike.
func TestBatchEntryRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 123456789, time.FixedZone("x", 3600))
	for _, n := range []int{1, 3, 200} {
		evs := make([]event.Message, n)
		for i := range evs {
			evs[i] = event.Message{ID: fmt.Sprintf("ev-%d", i), Subject: "callcenter.acme.call.created",
				Type: events.CallCreated, Data: []byte(fmt.Sprintf(`{"id":%d,"name":"call"}`, i))}
			if i%2 == 0 {
				evs[i].Time = at
				evs[i].Headers = map[string]string{"traceparent": "00-1-2-01", "b": "x"}
			}
		}
		evs[0].Data = []byte{}
		blob, err := encodeBatch(evs)
		if err != nil {
			t.Fatal(err)
		}
		if want := byte(batchS2); n == 200 && blob[0] != want {
			t.Errorf("%d events: format %d, want %d (compressed)", n, blob[0], want)
		}
		recs, err := decodeBatch(nil, fmt.Sprintf("1000-%d", n+4), fmt.Sprint(n), blob, func(b []byte) string { return string(b) })
		if err != nil || len(recs) != n {
			t.Fatalf("%d events: decoded %d, %v", n, len(recs), err)
		}
		for i, r := range recs {
			e := evs[i]
			if r.StreamID != fmt.Sprintf("1000-%d", 5+i) || r.ID != e.ID || r.Subject != e.Subject || r.Type != e.Type ||
				!r.Time.Equal(e.Time) || !bytes.Equal(r.Data, e.Data) || len(r.Headers) != len(e.Headers) || r.Headers["b"] != e.Headers["b"] {
				t.Fatalf("%d events: event %d read as %+v, want %+v", n, i, r, e)
			}
		}
	}
	if _, err := decodeBatch(nil, "1000-1", "3", []byte{batchFormat}, nil); err == nil {
		t.Error("an entry of 3 events under id 1000-1 was read")
	}
	if _, err := decodeBatch(nil, "1000-5", "1", []byte{9, 1, 2}, nil); err == nil {
		t.Error("an unknown format was read")
	}
}

// An outbox written by a release before the batch entries (one event per entry)
// is read, trimmed and kept for the retention as it always was, and the batch
// entries committed after the upgrade follow its entries: every event once, in
// order, counted one by one; a trim inside a batch entry acknowledges exactly
// the events up to its id.
func TestOutboxUpgradeToBatchEntries(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	for i := range 3 { // as releases before the batch entries wrote them
		args, err := appendOutboxEntry(nil, event.Message{ID: fmt.Sprintf("e%d", i), Subject: "s", Data: []byte("{}"), Type: events.CallCreated})
		if err != nil {
			t.Fatal(err)
		}
		v := append([]any{"id"}, args[0], "subject", args[1], "data", args[2], "headers", args[3], "type", args[4], "time", args[5])
		if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.store.k.outbox, Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	l := mustAcquire(t, e.store, "a", time.Minute)
	ids := commitEvents(t, e.store, l, 3, 4)
	ids = append(ids, commitEvents(t, e.store, l, 7, 3)...)
	all, err := e.store.ReadOutbox(ctx, "", 100)
	if err != nil || len(all) != 10 {
		t.Fatalf("ReadOutbox = %d records, %v; want 3 old and 7 new", len(all), err)
	}
	if got := recordIDs(all); !slices.Equal(got, eventIDs(0, 10)) {
		t.Fatalf("read %v, want e0..e9 in order", got)
	}
	if !slices.Equal(streamIDs(all[3:]), ids) {
		t.Fatalf("stream ids %v, want the commits' %v", streamIDs(all[3:]), ids)
	}
	if n, err := e.store.OutboxLen(ctx); err != nil || n != 10 {
		t.Fatalf("OutboxLen = %d %v, want 10 events", n, err)
	}
	// Up to the second event of the first batch entry: the entry stays.
	if err := e.store.TrimOutbox(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	rest, err := e.store.ReadOutbox(ctx, "", 100)
	if err != nil || !slices.Equal(recordIDs(rest), eventIDs(5, 5)) {
		t.Fatalf("after the trim: %v %v, want e5..e9", recordIDs(rest), err)
	}
	if got := ackedIDs(t, e.store); !slices.Equal(got, eventIDs(0, 5)) {
		t.Fatalf("acknowledged kept %v, want e0..e4", got)
	}
	if page, err := e.store.ReadAcked(ctx, all[3].StreamID, 1); err != nil || len(page) != 1 || page[0].ID != "e4" {
		t.Fatalf("ReadAcked after e3 = %+v %v, want e4", page, err)
	}
	if got, err := e.store.ReadOutbox(ctx, ids[2], 2); err != nil || !slices.Equal(recordIDs(got), []string{"e6", "e7"}) {
		t.Fatalf("ReadOutbox after e5, 2 = %v %v, want e6 e7", recordIDs(got), err)
	}
	if err := e.store.TrimOutbox(ctx, ids[len(ids)-1]); err != nil {
		t.Fatal(err)
	}
	if n, err := e.store.OutboxLen(ctx); err != nil || n != 0 {
		t.Fatalf("OutboxLen after trimming all = %d %v", n, err)
	}
	if got := ackedIDs(t, e.store); !slices.Equal(got, eventIDs(0, 10)) {
		t.Fatalf("acknowledged kept %v, want e0..e9", got)
	}
}

func recordIDs(recs []event.Committed) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func streamIDs(recs []event.Committed) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.StreamID
	}
	return out
}

// Batch entries compressed with zstd, as the releases of November 2026 wrote
// them (an outbox or a retention left by the release before an upgrade), are
// still read.
func TestBatchEntryZstd(t *testing.T) {
	evs := []event.Message{{ID: "ev-1", Subject: "callcenter.acme.call.created", Type: events.CallCreated, Data: []byte(`{"id":1}`)},
		{ID: "ev-2", Subject: "callcenter.acme.call.ended", Type: events.CallEnded, Data: bytes.Repeat([]byte("x"), 600)}}
	raw, err := layoutBatch(nil, evs)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	blob := enc.EncodeAll(raw[1:], []byte{batchZstd})
	recs, err := decodeBatch(nil, "1000-7", "2", blob, func(b []byte) string { return string(b) })
	if err != nil || len(recs) != 2 || recs[1].StreamID != "1000-7" || recs[1].ID != "ev-2" || !bytes.Equal(recs[1].Data, evs[1].Data) {
		t.Fatalf("zstd entry read as %+v, %v", recs, err)
	}
}

// The stream ids of a batch entry's events are the n ids up to the entry's own,
// however many digits their sequence numbers have.
func TestBatchIDs(t *testing.T) {
	for _, c := range []struct {
		entry string
		n     int
	}{{"1714557600000-0", 1}, {"1714557600000-99", 100}, {"5-1000", 995}, {"0-18446744073709551615", 3}} {
		got, err := batchIDs(c.entry, c.n)
		if err != nil {
			t.Fatalf("batchIDs(%s, %d): %v", c.entry, c.n, err)
		}
		last, _ := parseStreamID(c.entry)
		for i, id := range got {
			if want := fmt.Sprintf("%d-%d", last.ms, last.seq-uint64(c.n-1-i)); id != want {
				t.Fatalf("batchIDs(%s, %d)[%d] = %q, want %q", c.entry, c.n, i, id, want)
			}
		}
		if len(got) != c.n {
			t.Errorf("batchIDs(%s, %d) = %d ids", c.entry, c.n, len(got))
		}
	}
	if _, err := batchIDs("5-3", 5); err == nil {
		t.Error("batchIDs(5-3, 5): no error for more events than the entry's sequence holds")
	}
}
