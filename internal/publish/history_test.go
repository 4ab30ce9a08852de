package publish

import (
	"github.com/callbus/callbus/internal/testkit/simtest"
	"testing"
	"time"
)

// History reads the account's messages as the relay published them: the newest
// Callbus-Outbox-Id, and every message from a time on, in order.
func TestHistory(t *testing.T) {
	b := newBed(t, false)
	h := NewHistory(b.js, "CALLCENTER", "callcenter.acme.>")
	if id, err := h.NewestOutboxID(t.Context()); err != nil || id != "" {
		t.Fatalf("NewestOutboxID of an empty stream = %q %v", id, err)
	}
	b.commit(t, 5)
	run(t, b.relay())
	simtest.WaitFor(t, 20*time.Second, "outbox trimmed", func() bool { return b.outboxLen(t) == 0 })
	if id, err := h.NewestOutboxID(t.Context()); err != nil || id != b.ids[4] {
		t.Fatalf("NewestOutboxID = %q %v, want %s", id, err, b.ids[4])
	}
	var got []string
	err := h.Read(t.Context(), time.Time{}, func(oid string, body []byte) error {
		got = append(got, oid+" "+string(body))
		return nil
	})
	if err != nil || len(got) != 5 || got[0] != b.ids[0]+` {"n":0}` || got[4] != b.ids[4]+` {"n":4}` {
		t.Fatalf("Read = %q %v", got, err)
	}
	if id, err := NewHistory(b.js, "CALLCENTER", "callcenter.other.>").NewestOutboxID(t.Context()); err != nil || id != "" {
		t.Fatalf("another account's NewestOutboxID = %q %v, want none", id, err)
	}
}
