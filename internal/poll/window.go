package poll

import (
	"context"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
)

// pageFunc reads one page of a by_time window.
type pageFunc[T any] func(ctx context.Context, w callcenter.TimeWindow, page int) (callcenter.Page[T], error)

// minSplit is the narrowest window listWindow splits: by_time goes to the second.
const minSplit = 2 * time.Second

// listWindow reads every record of the window w, whatever the list order, and
// hands each page to each as it arrives, so memory holds a page, not the window.
// List order is undocumented (field note 2) and a list may move or reshuffle
// between two page requests, so a window read in several pages is complete only
// when it held as many distinct records as the first page's meta.total_count said;
// otherwise (or without meta) it is split in two halves by time, each read the same
// way, until every piece fits in one page, which no order can spoil. Records may
// come more than once (window edges, moving lists, a window read again in pieces):
// each must skip what it has seen.
func listWindow[T any](ctx context.Context, fetch pageFunc[T], w callcenter.TimeWindow, id func(T) int64, each func([]T) error) error {
	return readWindow(ctx, fetch, w, id, each, false)
}

// readWindow is listWindow; unstable says that paging already proved unreliable,
// so a window of several pages is split at once.
func readWindow[T any](ctx context.Context, fetch pageFunc[T], w callcenter.TimeWindow, id func(T) int64, each func([]T) error, unstable bool) error {
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
	ids := make(map[int64]struct{}, first.Meta.TotalCount)
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
	if first.Meta == nil || len(ids) >= first.Meta.TotalCount || !canSplit {
		return nil // complete, or more records in one second than a page holds: best effort
	}
	return split(ctx, fetch, w, id, each)
}

// split reads the two halves of w.
func split[T any](ctx context.Context, fetch pageFunc[T], w callcenter.TimeWindow, id func(T) int64, each func([]T) error) error {
	mid := w.From.Add(w.To.Sub(w.From) / 2).Truncate(time.Second)
	if err := readWindow(ctx, fetch, callcenter.TimeWindow{From: w.From, To: mid}, id, each, true); err != nil {
		return err
	}
	return readWindow(ctx, fetch, callcenter.TimeWindow{From: mid, To: w.To}, id, each, true)
}

func distinct[T any](items []T, id func(T) int64) int {
	seen := make(map[int64]struct{}, len(items))
	for _, it := range items {
		seen[id(it)] = struct{}{}
	}
	return len(seen)
}
