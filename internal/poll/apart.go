package poll

import (
	"fmt"
	"runtime/debug"
)

// apart runs f in a goroutine of its own and waits for it, raising its panic
// again, with f's stack, in the caller's goroutine.
//
// Why: Run's goroutine lives as long as the leadership and waits between its
// turns most of the time, but a turn's calls run deep (API client, page
// decoders, diffs, Redis client and its hooks): every resource's cycle grows its
// goroutine's stack to 32 KB, at times 64 KB. A goroutine keeps the stack it
// grew to, and the collector halves it at most once per cycle, and only while
// less than a quarter of it is in use: Run's goroutine held some 15–30 KB for
// each account of a fleet replica, a tenth of its memory at 2,000 accounts. With
// the turns apart, only the turns under way hold a deep stack; Run's goroutine
// stays as shallow as it parks.
func apart(f func() error) error {
	var err, panicked error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				panicked = fmt.Errorf("poller: panic: %v\n%s", v, debug.Stack())
			}
		}()
		err = f()
	}()
	<-done
	if panicked != nil {
		panic(panicked)
	}
	return err
}
