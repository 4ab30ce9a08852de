package service

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/rs/zerolog"
)

// TestJetStreamStoreRestoredFromAnOlderCopy: mid-run, the poller running
// throughout, the NATS server stops and comes back with its JetStream store as
// copied 20 steps earlier: every event it acknowledged since is gone, as after a
// power loss before it synced them (sync_interval). The relay notices the
// reconnection, publishes the lost events again from the outbox's retention, in
// order, and goes on: the audit finds every change exactly once, no id twice, no
// chain broken, and the final states are the world's.
func TestJetStreamStoreRestoredFromAnOlderCopy(t *testing.T) {
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	w := newWorld(t, nil)
	logs := &simtest.Buffer{}
	log := zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), logs)).Level(zerolog.ErrorLevel)
	svc := start(t, w, testSettings(w, ns.URL(), rs.URL, "jsloss-1"), log)
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	svc.advance(t, 30)
	copied := ns.CopyStore(t)
	copiedLen := len(readStream(t, ns))
	svc.advance(t, 20)
	// The events of those 20 steps acknowledged: the connection back, the relay
	// caught up.
	simtest.WaitFor(t, 60*time.Second, "the relay to publish after the copy", func() bool {
		n, err := store.OutboxLen(t.Context())
		return err == nil && n == 0 && len(readStream(t, ns)) > copiedLen
	})
	ns.RestoreStore(t, copied)
	svc.advance(t, 30)
	caughtUp(t, svc.cycles, store)
	svc.stop(t)
	if !bytes.Contains(logs.Bytes(), []byte("the stream lost events it had acknowledged")) {
		t.Errorf("the loss went unnoticed")
	}
	r := auditStream(t, ns, w, false)
	for _, p := range r.Problems {
		t.Error(p)
	}
	t.Logf("%d messages: %v", r.Messages, r.ByType)
}
