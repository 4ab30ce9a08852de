// Package publish is the JetStream side of callbus: it provisions the stream and
// relays the outbox (events committed to Redis together with their snapshots) to
// it, in order, with Nats-Msg-Id set to the event id, trimming the outbox only
// after the server has acknowledged every message up to that point.
package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamConfig is what callbus needs of its stream.
type StreamConfig struct {
	Name     string        // e.g. CALLCENTER
	Prefix   string        // subjects <Prefix>.> are captured
	MaxAge   time.Duration // how long events are kept for replay
	Dupes    time.Duration // the duplicate window (Nats-Msg-Id deduplication)
	Replicas int           // 1 for a single server; 3 in a cluster
	Memory   bool          // memory storage instead of file (tests, demos)
}

// ErrStreamMismatch reports an existing stream that cannot hold callbus's subjects.
var ErrStreamMismatch = errors.New("existing stream does not capture the subject prefix")

// EnsureStream creates the stream when it does not exist. An existing stream is left
// as the operator configured it (it may be managed elsewhere), but it must capture
// <prefix>.>; otherwise ErrStreamMismatch is returned with the subjects it has.
// Settings that differ from cfg are returned as notes for the caller to log.
// It is idempotent and safe to call on every start.
func EnsureStream(ctx context.Context, js jetstream.StreamManager, cfg StreamConfig) (jetstream.Stream, []string, error) {
	want := cfg.Prefix + ".>"
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		storage := jetstream.FileStorage
		if cfg.Memory {
			storage = jetstream.MemoryStorage
		}
		s, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:        cfg.Name,
			Description: "callbus: change events of the call-center API",
			Subjects:    []string{want},
			Storage:     storage,
			MaxAge:      cfg.MaxAge,
			Duplicates:  cfg.Dupes,
			Replicas:    max(cfg.Replicas, 1),
			Discard:     jetstream.DiscardOld,
		})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil, nil, fmt.Errorf("create stream %s: %w", cfg.Name, err)
		}
		if err != nil { // another replica created it first
			s, err = js.Stream(ctx, cfg.Name)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("look up stream %s: %w", cfg.Name, err)
	}
	got := s.CachedInfo().Config
	if !anyCovers(got.Subjects, cfg.Prefix) {
		return nil, nil, fmt.Errorf("stream %s has subjects %v, none captures %s: %w", cfg.Name, got.Subjects, want, ErrStreamMismatch)
	}
	var notes []string
	if got.MaxAge != cfg.MaxAge {
		notes = append(notes, fmt.Sprintf("max age is %s, configured %s", got.MaxAge, cfg.MaxAge))
	}
	if got.Duplicates != cfg.Dupes {
		notes = append(notes, fmt.Sprintf("duplicate window is %s, configured %s", got.Duplicates, cfg.Dupes))
	}
	return s, notes, nil
}

// anyCovers reports whether one of the filters matches every subject <prefix>.….
func anyCovers(filters []string, prefix string) bool {
	for _, f := range filters {
		if covers(f, prefix) {
			return true
		}
	}
	return false
}

// covers reports whether filter f matches every subject that starts with the tokens
// of prefix followed by at least one more token: "callcenter.>", "*.>" and ">" cover
// "callcenter"; "callcenter.*" does not (it misses callcenter.acme.call.created).
func covers(f, prefix string) bool {
	ft, pt := strings.Split(f, "."), strings.Split(prefix, ".")
	for i, tok := range ft {
		if tok == ">" {
			return true
		}
		if i >= len(pt) || (tok != "*" && tok != pt[i]) {
			return false
		}
	}
	return false
}
