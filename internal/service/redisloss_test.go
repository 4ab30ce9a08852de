package service

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/rs/zerolog"
)

// TestRedisGoesBackInTime: mid-run, Redis restarts empty (no persistence), is
// restored from an RDB copied 20 steps earlier (the poller running throughout), or
// has every key deleted. The service notices before its next term commits, rebuilds
// the state from the stream and goes on: the audit finds every change exactly once,
// no id reused, no chain broken, and the final states are the world's.
func TestRedisGoesBackInTime(t *testing.T) {
	cases := []struct {
		name string
		// copyAt returns what back needs, taken 20 steps before back runs.
		copyAt func(t *testing.T, rs *redistest.Server) []byte
		back   func(t *testing.T, rs *redistest.Server, saved []byte)
	}{
		{"restarted empty", nil, func(t *testing.T, rs *redistest.Server, _ []byte) { rs.Restart(t) }},
		{"restored from an older RDB", saveRDB, func(t *testing.T, rs *redistest.Server, rdb []byte) {
			rs.Stop()
			if err := os.WriteFile(filepath.Join(rs.Dir(), "dump.rdb"), rdb, 0o600); err != nil {
				t.Fatal(err)
			}
			rs.Restart(t)
		}},
		{"every key deleted", nil, func(t *testing.T, rs *redistest.Server, _ []byte) {
			if err := rs.Client(t).FlushAll(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := redistest.StartWithArgs(t) // persistence off: dump.rdb only when asked
			ns := natstest.Start(t)
			w := newWorld(t, nil)
			logs := &simtest.Buffer{}
			log := zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), logs)).Level(zerolog.ErrorLevel)
			svc := start(t, w, testSettings(w, ns.URL(), rs.URL, "loss-1"), log)
			svc.advance(t, 30)
			var saved []byte
			if tc.copyAt != nil {
				saved = tc.copyAt(t, rs)
			}
			svc.advance(t, 20)
			tc.back(t, rs, saved)
			svc.advance(t, 30)
			store, err := cursor.New(rs.Client(t), "acme")
			if err != nil {
				t.Fatal(err)
			}
			caughtUp(t, svc.cycles, store)
			svc.stop(t)
			if !bytes.Contains(logs.Bytes(), []byte("Redis went back in time")) {
				t.Errorf("the rollback went unnoticed")
			}
			r := auditStream(t, ns, w, false)
			for _, p := range r.Problems {
				t.Error(p)
			}
			t.Logf("%d messages: %v", r.Messages, r.ByType)
		})
	}
}

// saveRDB makes Redis write its RDB file now and returns its bytes.
func saveRDB(t *testing.T, rs *redistest.Server) []byte {
	t.Helper()
	if err := rs.Client(t).Save(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(rs.Dir(), "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
