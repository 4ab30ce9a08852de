package callcenter

import (
	"context"
	"errors"
	"time"
)

// windowPage reads one page of a by_time window, per records a page.
type windowPage[T any] func(ctx context.Context, w TimeWindow, page, per int) (Page[T], error)

// recordKeys tell a window reader what it needs of a record: its id (to count
// distinct records and hand each once) and its created_time (to check list order).
type recordKeys[T any] struct {
	id      func(T) int64
	created func(T) time.Time
}

// minSplit is the narrowest window readWindow splits: by_time goes to the second.
const minSplit = 2 * time.Second

// readWindow reads every record of the window w, per records a page, whatever
// the list order, and hands each page to each as it arrives, so memory holds a
// page, not the window.
//
// The window is read in the pieces mem remembers from the last read (see
// pieceMemory; nil: one piece), so that a split found once is not searched for
// again every cycle. A piece is read in pages when they can be trusted, else
// split in two halves by time, each read the same way, until every piece fits in
// one page, which no order can spoil. List order is undocumented (field note 2)
// and a list may move or reshuffle between two page requests, so pages are
// trusted when the first page's meta.total_count was reached in distinct
// records, or, without meta (field note 7: the next page is read until a short
// or empty one), when every page came in one created_time order, newest or
// oldest first: a list in an order only repeats records when it moves, it does
// not hide any. A page too large for the client (ErrBodyTooLarge) splits its
// window too, or, once a window is under minSplit, halves per. Records may come
// more than once (window edges, moving lists, a window read again in pieces):
// wrap each in onlyOnce to skip them. mem learns the pieces read only when the
// whole window was read.
func readWindow[T any](ctx context.Context, fetch windowPage[T], w TimeWindow, per int, keys recordKeys[T], mem *pieceMemory, each func([]T) error) error {
	r := &windowReader[T]{fetch: fetch, keys: keys, each: each}
	for _, pw := range mem.plan(w, per) {
		if err := r.piece(ctx, pw, per, false); err != nil {
			return err
		}
	}
	mem.keep(r.read)
	return nil
}

// windowReader is one readWindow.
type windowReader[T any] struct {
	fetch windowPage[T]
	keys  recordKeys[T]
	each  func([]T) error
	read  []piece // the pieces read whole, in time order
}

// piece reads the window w; unstable says that paging already proved
// unreliable, so a window of several pages is split at once.
func (r *windowReader[T]) piece(ctx context.Context, w TimeWindow, per int, unstable bool) error {
	canSplit := w.To.Sub(w.From) >= minSplit
	first, err := r.fetch(ctx, w, 1, per)
	if err != nil {
		return r.tooLarge(ctx, w, per, err)
	}
	if first.IsLast() {
		r.read = append(r.read, piece{w: w, n: first.served()})
		return r.each(first.Items)
	}
	counted := first.Meta != nil && first.Meta.TotalCount > 0
	if canSplit && (unstable || (!counted && !r.ordered(&listOrder{}, nil, first.Items))) {
		// Nothing to check completeness against: go straight to pieces of one page.
		return r.split(ctx, w, per)
	}
	return r.pages(ctx, w, per, first, canSplit)
}

// pages reads the window w page after page from its first page, and splits it
// when the pages cannot be trusted (see readWindow).
func (r *windowReader[T]) pages(ctx context.Context, w TimeWindow, per int, first Page[T], canSplit bool) error {
	want := 0 // distinct records the window holds; 0: unknown, the list order decides
	if first.Meta != nil {
		want = first.Meta.TotalCount
	}
	var (
		order listOrder
		ids   idSet // the window's distinct records
	)
	got, served, page, ordered := 0, 0, first, true
	for n := 2; ; n++ {
		ordered = ordered && r.ordered(&order, &ids, page.Items)
		for _, it := range page.Items {
			ids.add(r.keys.id(it))
		}
		got += len(page.Rejections) // left out, but served: they count toward total_count
		served += page.served()
		if err := r.each(page.Items); err != nil {
			return err
		}
		if page.IsLast() {
			break
		}
		prev := page.fingerprint
		var err error
		if page, err = r.fetch(ctx, w, n, per); err != nil {
			return r.tooLarge(ctx, w, per, err)
		}
		if page.fingerprint == prev && prev != 0 && page.served() > 0 { // 0: a page built in Go
			return errRepeats(n)
		}
	}
	complete := (want > 0 && got+ids.len() >= want) || (want <= 0 && ordered)
	if complete || !canSplit {
		// Complete, or more records in one second than a page holds: best effort.
		r.read = append(r.read, piece{w: w, n: served})
		return nil
	}
	return r.split(ctx, w, per)
}

// ordered reports whether the records of a page not seen yet (ids: those seen,
// nil: none) continue order in one created_time order.
func (r *windowReader[T]) ordered(order *listOrder, seen *idSet, items []T) bool {
	for _, it := range items {
		if seen == nil || !seen.has(r.keys.id(it)) {
			order.seeTime(r.keys.created(it))
		}
	}
	return !order.unordered() || !order.started
}

// tooLarge reads w again in smaller pieces when err says a page was too large
// for the client: in halves of the window, or with half the page size once the
// window cannot be split. Any other error is returned as is.
func (r *windowReader[T]) tooLarge(ctx context.Context, w TimeWindow, per int, err error) error {
	switch {
	case !errors.Is(err, ErrBodyTooLarge):
		return err
	case w.To.Sub(w.From) >= minSplit:
		return r.split(ctx, w, per)
	case per > 1:
		return r.piece(ctx, w, per/2, true)
	}
	return err
}

// split reads the two halves of w.
func (r *windowReader[T]) split(ctx context.Context, w TimeWindow, per int) error {
	mid := w.From.Add(w.To.Sub(w.From) / 2).Truncate(time.Second)
	if err := r.piece(ctx, TimeWindow{From: w.From, To: mid}, per, true); err != nil {
		return err
	}
	return r.piece(ctx, TimeWindow{From: mid, To: w.To}, per, true)
}

// onlyOnce wraps each so that it gets every record (by id) once: the first copy
// handed on; later copies are dropped, and a page left empty is not handed on.
// Memory holds the ids seen, not the records. A page without a record seen
// before (the usual page) is handed on as it is, not copied.
func onlyOnce[T any](id func(T) int64, each func([]T) error) func([]T) error {
	var seen idSet
	return func(page []T) error {
		fresh, copied := page, false
		for i, it := range page {
			if !seen.add(id(it)) {
				if !copied { // the first copy: the records before it, then the fresh ones
					fresh, copied = append(make([]T, 0, len(page)), page[:i]...), true
				}
				continue
			}
			if copied {
				fresh = append(fresh, it)
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		return each(fresh)
	}
}
