package service

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/rs/zerolog"
)

// A Redis that evicts keys is refused at start, before anything is polled.
func TestRunRefusesEvictingRedis(t *testing.T) {
	w := newWorld(t, nil)
	ns := natstest.Start(t)
	rs := redistest.StartWithArgs(t, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := Run(ctx, testSettings(w, ns.URL(), rs.URL, "a"), zerolog.Nop())
	if !errors.Is(err, cursor.ErrEvictingRedis) {
		t.Fatalf("Run = %v, want ErrEvictingRedis", err)
	}
}
