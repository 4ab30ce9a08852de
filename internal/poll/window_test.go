package poll

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// windowEnds records, for every list request with by_time, how far its end lay
// past the present: the later of the wall clock and the simulator's clock.
type windowEnds struct {
	s       *sim.Sim
	mu      sync.Mutex
	past    time.Duration // the furthest a window reached past the present
	windows int
}

func (we *windowEnds) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("by_time[to]"); to != "" {
			end, err := time.Parse(time.RFC3339, to)
			present := maxTime(time.Now(), we.s.Now())
			we.mu.Lock()
			we.windows++
			if err == nil {
				we.past = max(we.past, end.Sub(present))
			}
			we.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// List windows end at the poller's clock, never past it (by_time goes to the
// second: up to a second more), while the world runs ahead of the wall clock;
// and the poller still announces every call of that world.
func TestWindowsNeverPassTheClock(t *testing.T) {
	we := &windowEnds{}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: 4, Backlog: 40}, everything, we.wrap)
	we.s = s
	stepWorld(t, p, s, 10)
	pollAll(t, p)
	if we.windows == 0 || we.past > 2*time.Second {
		t.Errorf("%d windows; one ended %s past the present, want at most 2s", we.windows, we.past)
	}
	if got, st := outboxTypes(t, store), s.Stats(); got["call.created"] != st.Calls || got["call.ended"] != st.CallsEnded {
		t.Errorf("events %v; the world %+v", got, st)
	}
}
