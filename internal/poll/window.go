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

// listWindow reads every record of the window w, whatever the list order. List
// order is undocumented (field note 2) and a list may move or reshuffle between two
// page requests, so a window read in several pages is complete only when it holds
// as many distinct records as the first page's meta.total_count said; otherwise (or
// without meta) it is split in two halves by time, each read the same way, until
// every piece fits in one page, which no order can spoil. Records may repeat
// (window edges, moving lists): the caller dedupes.
func listWindow[T any](ctx context.Context, fetch pageFunc[T], w callcenter.TimeWindow, id func(T) int64) ([]T, error) {
	return readWindow(ctx, fetch, w, id, false)
}

// readWindow is listWindow; unstable says that paging already proved unreliable,
// so a window of several pages is split at once.
func readWindow[T any](ctx context.Context, fetch pageFunc[T], w callcenter.TimeWindow, id func(T) int64, unstable bool) ([]T, error) {
	first, err := fetch(ctx, w, 1)
	if err != nil {
		return nil, err
	}
	if first.IsLast() {
		return first.Items, nil
	}
	if unstable || first.Meta == nil || first.Meta.TotalCount == 0 {
		// Nothing to check completeness against: go straight to pieces of one page.
		if w.To.Sub(w.From) >= minSplit {
			return split(ctx, fetch, w, id, nil)
		}
	}
	items := append([]T(nil), first.Items...)
	for n := 2; ; n++ {
		pg, err := fetch(ctx, w, n)
		if err != nil {
			return nil, err
		}
		items = append(items, pg.Items...)
		if pg.IsLast() {
			break
		}
	}
	if first.Meta != nil && first.Meta.TotalCount > 0 && distinct(items, id) >= first.Meta.TotalCount {
		return items, nil
	}
	if w.To.Sub(w.From) < minSplit {
		return items, nil // more records in one second than a page holds: best effort
	}
	return split(ctx, fetch, w, id, items)
}

// split reads the two halves of w and appends them to items.
func split[T any](ctx context.Context, fetch pageFunc[T], w callcenter.TimeWindow, id func(T) int64, items []T) ([]T, error) {
	mid := w.From.Add(w.To.Sub(w.From) / 2).Truncate(time.Second)
	lo, err := readWindow(ctx, fetch, callcenter.TimeWindow{From: w.From, To: mid}, id, true)
	if err != nil {
		return nil, err
	}
	hi, err := readWindow(ctx, fetch, callcenter.TimeWindow{From: mid, To: w.To}, id, true)
	if err != nil {
		return nil, err
	}
	return append(append(items, lo...), hi...), nil
}

func distinct[T any](items []T, id func(T) int64) int {
	seen := make(map[int64]struct{}, len(items))
	for _, it := range items {
		seen[id(it)] = struct{}{}
	}
	return len(seen)
}
