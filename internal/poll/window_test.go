package poll

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// windowEnds records, for every list request with by_time, how far its end lay
// past the present (the later of the wall clock and the simulator's clock), and
// counts the list requests.
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

func (we *windowEnds) counts() (time.Duration, int) {
	we.mu.Lock()
	defer we.mu.Unlock()
	return we.past, we.windows
}

// List windows end at the poller's clock, never past it (by_time goes to the
// second and its end is exclusive: up to a second more), once a response told
// the API's present. A first read of 3,000
// calls (25 hours of backlog, three pages) in random order, which no paging can
// trust, is read in pieces of one page, no piece in the future: the 24 hours
// the first read reaches back hold about 2,900 calls, three pages, so about a
// dozen requests (the halving of a window ending 7 days ahead would add a
// request per empty future half); the next cycles, reading from the newest call
// less the overlap, one each. Every call is announced.
func TestWindowsNeverPassTheClock(t *testing.T) {
	we := &windowEnds{}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: -1, Backlog: 3000, Order: sim.RandomOrder},
		map[string]time.Duration{ResCalls: time.Second}, we.wrap)
	we.s = s
	// A first response tells the API's present (before one, windows reach ahead).
	if err := p.cycle(t.Context(), ResUserStatuses); err != nil {
		t.Fatal(err)
	}
	pollAll(t, p)
	past, first := we.counts()
	pollAll(t, p)
	pollAll(t, p)
	_, all := we.counts()
	if past > time.Second {
		t.Errorf("a window ended %s past the present, want at most 1s", past)
	}
	if first > 12 || all-first > 2 {
		t.Errorf("%d list requests for the first read, %d for the next two: want a handful, then the remembered pieces", first, all-first)
	}
	t.Logf("%d list requests for the first read, %d for the next two", first, all-first)
	if got := outboxTypes(t, store); got["call.created"] == 0 {
		t.Errorf("events %v: no call announced", got)
	}
}
