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

// scratches holds a *sync.Pool of *[]T for each item type T.
var scratches sync.Map

func scratchPool[T any]() *sync.Pool {
	key := reflect.TypeFor[T]()
	if p, ok := scratches.Load(key); ok {
		return p.(*sync.Pool)
	}
	p, _ := scratches.LoadOrStore(key, &sync.Pool{New: func() any { return new([]T) }})
	return p.(*sync.Pool)
}

// getScratch returns an empty slice to decode a page's items into, and a
// function that takes the items out: a copy of them, of their exact size
// (non-nil, also when empty), after which the slice is cleared and recycled.
func getScratch[T any]() (buf []T, done func([]T) []T) {
	pool := scratchPool[T]()
	p := pool.Get().(*[]T)
	return (*p)[:0], func(items []T) []T {
		out := append(make([]T, 0, len(items)), items...)
		clear(items[:cap(items)]) // no pointers into the page kept alive
		*p = items[:0]
		pool.Put(p)
		return out
	}
}
