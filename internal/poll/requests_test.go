package poll

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// RewindCursors moves only the calls high water, only back, and says when the
// calls before the prune horizon stay unread; other resources and a forward
// move are ErrRewind.
func TestRewindCursors(t *testing.T) {
	hw := "2026-03-01T12:00:00Z"
	cur := map[string]string{cursorHighWater: hw, cursorPruned: "2026-03-01T06:00:00Z", cursorEpoch: "e1"}
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }

	set, note, err := RewindCursors("calls", at("2026-03-01T08:00:00Z"), cur)
	if err != nil || len(set) != 1 || set[cursorHighWater] != "2026-03-01T08:00:00Z" || note != "" {
		t.Errorf("rewind: %v %q %v", set, note, err)
	}
	if _, note, err := RewindCursors("calls", at("2026-03-01T01:00:00Z"), cur); err != nil || !strings.Contains(note, "pruned") {
		t.Errorf("before the prune horizon: note %q, %v", note, err)
	}
	for _, bad := range []struct{ res, to string }{
		{"users", "2026-03-01T08:00:00Z"}, {"call_metrics", "2026-03-01T08:00:00Z"}, {"calls", "2026-03-01T13:00:00Z"},
	} {
		if _, _, err := RewindCursors(bad.res, at(bad.to), cur); !errors.Is(err, ErrRewind) {
			t.Errorf("%s to %s: %v, want ErrRewind", bad.res, bad.to, err)
		}
	}
	if _, _, err := RewindCursors("calls", at("2026-03-01T08:00:00Z"), map[string]string{}); !errors.Is(err, ErrRewind) {
		t.Errorf("nothing read yet: %v, want ErrRewind", err)
	}
}
