package diff

import "sync"

// scratch is the working memory of one call's diff: the snapshot's maps, the
// tracked fields and their values as written, the snapshot reader's buffer.
// None of it outlives the diff (its results hold copies: the next snapshot's
// bytes, the changes' strings), so it is recycled rather than allocated per
// record: a call read again unchanged made 13 allocations, 8 of them these
// (Go's escape analysis moves a buffer appended to through a pointer to the
// heap, so they could not live on the stack).
type scratch struct {
	fields map[string]string
	parts  map[string]partSnap
	fs     [maxTrackedFields]field
	vals   []byte // fieldWriter's values as written
	text   []byte // reader.fields' values as read
}

var scratches = sync.Pool{New: func() any {
	return &scratch{
		fields: make(map[string]string, maxTrackedFields),
		parts:  make(map[string]partSnap, 8),
		vals:   make([]byte, 0, 512),
		text:   make([]byte, 0, 1024),
	}
}}

func getScratch() *scratch { return scratches.Get().(*scratch) }

// release empties sc (no string of a record kept alive by the pool) and
// recycles it; nothing of it may be used after.
func (sc *scratch) release() {
	clear(sc.fields)
	clear(sc.parts)
	clear(sc.fs[:])
	sc.vals, sc.text = sc.vals[:0], sc.text[:0]
	scratches.Put(sc)
}
