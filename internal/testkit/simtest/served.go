package simtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// serve serves h over HTTP until the test ends and returns the server's URL: how
// a World and an Accounts put their simulator on the network.
func serve(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// clockRunner gives a World or an Accounts Run and Freeze over the manual clock
// the harness made for it.
type clockRunner struct {
	// advance moves the clock (a World's simulator catches up as it does; an
	// Accounts' worlds when asked); nil when the clock is not the harness's.
	advance    func(time.Duration)
	stop, done chan struct{}
}

// Run moves the harness's manual clock by speed × the real time elapsed, in 20
// ms steps, until Freeze (called at the end of the test at the latest). Call it
// at most once, and only where the harness made the clock (NewWorld with no
// clock in the config, NewAccounts).
func (r *clockRunner) Run(t testing.TB, speed float64) {
	if r.advance == nil {
		t.Fatal("simtest: Run on a clock the harness did not make (a config's own, or NewAccountsOn's)")
	}
	const step = 20 * time.Millisecond
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		tick := time.NewTicker(step)
		defer tick.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-tick.C:
				r.advance(time.Duration(speed * float64(step)))
			}
		}
	}()
	t.Cleanup(r.Freeze)
}

// Freeze stops the clock Run moves and returns once it no longer moves. It is
// idempotent, and does nothing where Run was not called.
func (r *clockRunner) Freeze() {
	if r.stop == nil {
		return
	}
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}
