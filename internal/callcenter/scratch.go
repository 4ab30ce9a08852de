package callcenter

import (
	"reflect"
	"sync"
)

// A page's items are decoded into a recycled slice, then copied into one of
// their exact number. Appending to a new slice grew it by doubling: for a page
// of 1,000 calls (about 330 bytes each before what they point to), about 700 KB
// of garbage in large objects, and a page held with up to twice the room it
// needed.

// scratches holds a *scratchList[T] for each item type T. Not a sync.Pool:
// one is emptied at every collection, which in a backlog comes every few pages,
// and each page then grew a new slice by doubling all over again (a fifth of
// the bytes the calls' and metrics' decode allocated).
var scratches sync.Map

// scratchList keeps up to maxScratches slices for reuse, none larger than
// maxScratchItems items (a rare larger page is left to the collector).
type scratchList[T any] struct {
	mu   sync.Mutex
	free []*[]T
}

const (
	maxScratches    = 2              // a slice is held only while a page is decoded: rarely two at once
	maxScratchItems = 2 * MaxPerPage // a page of MaxPerPage and the room its growth left
)

func scratchPool[T any]() *scratchList[T] {
	key := reflect.TypeFor[T]()
	if p, ok := scratches.Load(key); ok {
		return p.(*scratchList[T])
	}
	p, _ := scratches.LoadOrStore(key, &scratchList[T]{})
	return p.(*scratchList[T])
}

func (l *scratchList[T]) get() *[]T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		p := l.free[n-1]
		l.free = l.free[:n-1]
		return p
	}
	return new([]T)
}

func (l *scratchList[T]) put(p *[]T) {
	if cap(*p) > maxScratchItems {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.free) < maxScratches {
		l.free = append(l.free, p)
	}
}

// getScratch returns an empty slice to decode a page's items into, and a
// function that takes the items out: a copy of them, of their exact size
// (non-nil, also when empty), after which the slice is cleared and recycled.
func getScratch[T any]() (buf []T, done func([]T) []T) {
	list := scratchPool[T]()
	p := list.get()
	return (*p)[:0], func(items []T) []T {
		out := append(make([]T, 0, len(items)), items...)
		clear(items[:cap(items)]) // no pointers into the page kept alive
		*p = items[:0]
		list.put(p)
		return out
	}
}
