package callcenter

import (
	"testing"
	"time"
)

// The requests other integrations make show as X-RateLimit-Remaining falling
// faster than our own requests explain; they count for a window. A window that
// turned (Remaining rising) shows those of the new window, and when the next
// turn comes: a Remaining is trusted until then. In the first window, what was
// seen so far counts at its pace over a whole window.
func TestLimiterSeesOthers(t *testing.T) {
	clk := newFakeClock()
	l := newTestLimiter(t, clk, LimiterConfig{Share: 0.8})
	left := 100
	request := func(others int) {
		t.Helper()
		tk, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		left -= 1 + others
		tk.Done(rate(100, left, 1))
		clk.Advance(2 * time.Second)
	}
	request(0) // the first response: nothing to compare with yet
	for range 10 {
		request(3)
	}
	// 30 seen in the first 22 s: extrapolated over the first window.
	if st := l.Stats(); st.Others != 81 {
		t.Errorf("others %d, want 30 × 60/22 = 81", st.Others)
	}
	clk.Advance(38 * time.Second) // a whole window after the first Remaining
	if st := l.Stats(); st.Others != 30 {
		t.Errorf("others %d, want 30", st.Others)
	}
	left = 100 // the server's window turned: Remaining rose
	turn := clk.Now()
	request(5)
	if st := l.Stats(); st.Others != 32 { // 5 more; 3 left the window meanwhile
		t.Errorf("after the window turned: others %d, want 32", st.Others)
	}
	request(0)
	if want := turn.Add(time.Minute); !l.obsExpires.Equal(want) {
		t.Errorf("a Remaining trusted until %s, want the next turn %s", l.obsExpires, want)
	}
	clk.Advance(time.Minute)
	if st, u := l.Stats(), (&Client{lim: l}).Usage(); st.Others != 0 || u.Others != 0 {
		t.Errorf("a window later: others %d (usage %d), want 0", st.Others, u.Others)
	}
}
