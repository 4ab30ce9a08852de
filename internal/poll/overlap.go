package poll

// overlap hands pages to a goroutine of their own, so that the API client reads
// and decodes the next page while the last one is diffed and queued for commit
// (with batcher's background commits: the three overlap). Pages are handled one
// at a time and in order; memory holds the page being handled and the one being
// read, no more (add waits for the handler to take its page).
type overlap[T any] struct {
	pages chan []T
	done  chan struct{}
	err   error // the handler's first error, set before done closes
}

// startOverlap starts handling pages with each; wait must be called once the
// pages are all added (or given up on), whatever happened.
func startOverlap[T any](each func([]T) error) *overlap[T] {
	o := &overlap[T]{pages: make(chan []T), done: make(chan struct{})}
	go func() {
		defer close(o.done)
		for page := range o.pages {
			if err := each(page); err != nil {
				o.err = err
				return
			}
		}
	}()
	return o
}

// add hands page over, waiting while the previous one is handled; it returns the
// handler's error once it failed (the page is then dropped: wait says why).
func (o *overlap[T]) add(page []T) error {
	select {
	case o.pages <- page:
		return nil
	case <-o.done:
		return o.err
	}
}

// wait returns once every page added was handled, with the handler's first error.
func (o *overlap[T]) wait() error {
	close(o.pages)
	<-o.done
	return o.err
}
