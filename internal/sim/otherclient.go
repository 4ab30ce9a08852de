package sim

import (
	"sync"
	"time"
)

// OtherClient spends perWindow requests of the account's rate budget every rate
// window (Config.RateWindow), evenly spaced in real time, as another integration
// of the same account would: the limit is the whole account's (field note 8), so
// the X-RateLimit-Remaining a client reads falls faster than its own requests
// explain. Its requests are counted like any other (one over the plan is refused
// like any other) and touch nothing else of the world. perWindow <= 0 does
// nothing. stop ends it and returns once it has.
func (s *Sim) OtherClient(perWindow int) (stop func()) {
	if perWindow <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.cfg.RateWindow / time.Duration(perWindow))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.limiter.take()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
