package callcenter

import (
	"context"
	"errors"
	"time"
)

// windowPage reads one page of a by_time window, per records a page.
type windowPage[T any] func(ctx context.Context, w TimeWindow, page, per int) (Page[T], error)

// minSplit is the narrowest window readWindow splits: by_time goes to the second.
const minSplit = 2 * time.Second

// readWindow reads every record of the window w, per records a page, whatever
// the list order, and hands each page to each as it arrives, so memory holds a
// page, not the window. List order is undocumented (field note 2) and a list may
// move or reshuffle between two page requests, so a window read in several pages
// is complete only when it held as many distinct records as the first page's
// meta.total_count said; otherwise (or without meta) it is split in two halves by
// time, each read the same way, until every piece fits in one page, which no
// order can spoil. A page too large for the client (ErrBodyTooLarge) splits its
// window too, or, once a window is under minSplit, halves per. Records may come
// more than once (window edges, moving lists, a window read again in pieces):
// wrap each in onlyOnce to skip them.
func readWindow[T any](ctx context.Context, fetch windowPage[T], w TimeWindow, per int, id func(T) int64, each func([]T) error) error {
	r := windowReader[T]{fetch: fetch, id: id, each: each}
	return r.piece(ctx, w, per, false)
}

// windowReader is one readWindow.
type windowReader[T any] struct {
	fetch windowPage[T]
	id    func(T) int64
	each  func([]T) error
}

// piece reads the window w; unstable says that paging already proved
// unreliable, so a window of several pages is split at once.
func (r windowReader[T]) piece(ctx context.Context, w TimeWindow, per int, unstable bool) error {
	canSplit := w.To.Sub(w.From) >= minSplit
	first, err := r.fetch(ctx, w, 1, per)
	if err != nil {
		return r.tooLarge(ctx, w, per, err)
	}
	if first.IsLast() {
		return r.each(first.Items)
	}
	if canSplit && (unstable || first.Meta == nil || first.Meta.TotalCount <= 0) {
		// Nothing to check completeness against: go straight to pieces of one page.
		return r.split(ctx, w, per)
	}
	want := 0 // distinct records the window holds; 0: unknown
	if first.Meta != nil {
		want = first.Meta.TotalCount
	}
	ids := make(map[int64]struct{}, min(max(want, 0), MaxPerPage))
	got, page := 0, first
	for n := 2; ; n++ {
		for _, it := range page.Items {
			ids[r.id(it)] = struct{}{}
		}
		got += page.Rejected // left out, but served: they count toward total_count
		if err := r.each(page.Items); err != nil {
			return err
		}
		if page.IsLast() {
			break
		}
		prev := page.fingerprint
		if page, err = r.fetch(ctx, w, n, per); err != nil {
			return r.tooLarge(ctx, w, per, err)
		}
		if page.fingerprint == prev && prev != 0 && page.served() > 0 { // 0: a page built in Go
			return errRepeats(n)
		}
	}
	if got+len(ids) >= want || !canSplit {
		return nil // complete, or more records in one second than a page holds: best effort
	}
	return r.split(ctx, w, per)
}

// tooLarge reads w again in smaller pieces when err says a page was too large
// for the client: in halves of the window, or with half the page size once the
// window cannot be split. Any other error is returned as is.
func (r windowReader[T]) tooLarge(ctx context.Context, w TimeWindow, per int, err error) error {
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
func (r windowReader[T]) split(ctx context.Context, w TimeWindow, per int) error {
	mid := w.From.Add(w.To.Sub(w.From) / 2).Truncate(time.Second)
	if err := r.piece(ctx, TimeWindow{From: w.From, To: mid}, per, true); err != nil {
		return err
	}
	return r.piece(ctx, TimeWindow{From: mid, To: w.To}, per, true)
}

// onlyOnce wraps each so that it gets every record (by id) once: the first copy
// handed on; later copies are dropped, and a page left empty is not handed on.
// Memory holds the ids seen, not the records.
func onlyOnce[T any](id func(T) int64, each func([]T) error) func([]T) error {
	seen := map[int64]struct{}{}
	return func(page []T) error {
		fresh := make([]T, 0, len(page))
		for _, it := range page {
			if _, dup := seen[id(it)]; !dup {
				seen[id(it)] = struct{}{}
				fresh = append(fresh, it)
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		return each(fresh)
	}
}
