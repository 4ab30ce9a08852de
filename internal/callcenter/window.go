package callcenter

import (
	"context"
	"time"
)

// windowPage reads one page of a by_time window.
type windowPage[T any] func(ctx context.Context, w TimeWindow, page int) (Page[T], error)

// minSplit is the narrowest window readWindow splits: by_time goes to the second.
const minSplit = 2 * time.Second

// readWindow reads every record of the window w, whatever the list order, and
// hands each page to each as it arrives, so memory holds a page, not the window.
// List order is undocumented (field note 2) and a list may move or reshuffle
// between two page requests, so a window read in several pages is complete only
// when it held as many distinct records as the first page's meta.total_count said;
// otherwise (or without meta) it is split in two halves by time, each read the same
// way, until every piece fits in one page, which no order can spoil. Records may
// come more than once (window edges, moving lists, a window read again in pieces):
// wrap each in onlyOnce to skip them.
func readWindow[T any](ctx context.Context, fetch windowPage[T], w TimeWindow, id func(T) int64, each func([]T) error) error {
	return readPiece(ctx, fetch, w, id, each, false)
}

// readPiece is readWindow; unstable says that paging already proved unreliable,
// so a window of several pages is split at once.
func readPiece[T any](ctx context.Context, fetch windowPage[T], w TimeWindow, id func(T) int64, each func([]T) error, unstable bool) error {
	first, err := fetch(ctx, w, 1)
	if err != nil {
		return err
	}
	if first.IsLast() {
		return each(first.Items)
	}
	canSplit := w.To.Sub(w.From) >= minSplit
	if canSplit && (unstable || first.Meta == nil || first.Meta.TotalCount == 0) {
		// Nothing to check completeness against: go straight to pieces of one page.
		return split(ctx, fetch, w, id, each)
	}
	want := 0 // distinct records the window holds; 0: unknown
	if first.Meta != nil {
		want = first.Meta.TotalCount
	}
	ids := make(map[int64]struct{}, want)
	page := first
	for n := 2; ; n++ {
		for _, it := range page.Items {
			ids[id(it)] = struct{}{}
		}
		if err := each(page.Items); err != nil {
			return err
		}
		if page.IsLast() {
			break
		}
		if page, err = fetch(ctx, w, n); err != nil {
			return err
		}
	}
	if len(ids) >= want || !canSplit {
		return nil // complete, or more records in one second than a page holds: best effort
	}
	return split(ctx, fetch, w, id, each)
}

// split reads the two halves of w.
func split[T any](ctx context.Context, fetch windowPage[T], w TimeWindow, id func(T) int64, each func([]T) error) error {
	mid := w.From.Add(w.To.Sub(w.From) / 2).Truncate(time.Second)
	if err := readPiece(ctx, fetch, TimeWindow{From: w.From, To: mid}, id, each, true); err != nil {
		return err
	}
	return readPiece(ctx, fetch, TimeWindow{From: mid, To: w.To}, id, each, true)
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
