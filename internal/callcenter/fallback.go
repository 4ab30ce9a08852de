package callcenter

import (
	"context"
	"github.com/callbus/callbus/events"
	"time"
)

// callsFallback reads /calls without by_time and hands each the calls created at
// or after from, per at a time, deduplicated. It keeps the read in memory: the
// list order, which decides where reading may stop, is known only once read.
func (c *Client) callsFallback(ctx context.Context, from time.Time, per int, each func([]events.Call) error) error {
	r := unfiltered{c: c, per: per}
	calls, err := r.read(ctx, from)
	if err != nil {
		return err
	}
	for start := 0; start < len(calls); start += per {
		if err := each(calls[start:min(start+per, len(calls))]); err != nil {
			return err
		}
	}
	return nil
}

// unfiltered is one read of /calls without by_time. List order is undocumented
// (field note 2), so it is detected from the records, never assumed, and each
// order has its way of reading (read):
//   - newest first: forwards from page 1, stopping at the first page that reaches
//     back before from;
//   - oldest first: from the last page backwards, stopping at the first page that
//     starts before from;
//   - any other order (or one that breaks midway): every page; and when the list
//     reshuffles between requests, it is read again, twice at most, until it held
//     meta.total_count distinct calls.
type unfiltered struct {
	c   *Client
	per int
	ord listOrder
	all []events.Call // every copy read, in reading order

	prevN int    // number of the page read last (0: none yet)
	prev  uint64 // its fingerprint
	// rejected counts the records left out of the pages of the first pass:
	// served, so counted in meta.total_count, but never among all.
	rejected  int
	rereading bool
}

// read returns the calls created at or after from, each once (its last copy
// read, the freshest), in the order first read.
func (r *unfiltered) read(ctx context.Context, from time.Time) ([]events.Call, error) {
	first, err := r.page(ctx, 1)
	if err != nil {
		return nil, err
	}
	r.ord.see(first.Items)
	switch {
	case r.ord.oldestFirst() && lastPage(first, r.per) > 1:
		err = r.backwards(ctx, lastPage(first, r.per), from)
	case !first.IsLast():
		err = r.forwards(ctx, from)
	}
	if err == nil && r.ord.unordered() && first.Meta != nil {
		err = r.reread(ctx, first.Meta.TotalCount)
	}
	if err != nil {
		return nil, err
	}
	return lastCopies(createdSince(r.all, from)), nil
}

// page reads page n and keeps its calls. A page identical to the one read just
// before, when that was its neighbour, is an error: a server ignoring the page parameter would otherwise keep
// forwards going forever.
func (r *unfiltered) page(ctx context.Context, n int) (Page[events.Call], error) {
	pg, err := r.c.ListCalls(ctx, ListCallsOptions{ListOptions: ListOptions{Page: n, PerPage: r.per}})
	adjacent := r.prevN == n-1 || r.prevN == n+1
	if err == nil && r.prevN > 0 && adjacent && pg.fingerprint == r.prev && pg.served() > 0 {
		err = errRepeats(n)
	}
	r.prevN, r.prev = n, pg.fingerprint
	if !r.rereading {
		r.rejected += len(pg.Rejections)
	}
	r.all = append(r.all, pg.Items...)
	return pg, err
}

// forwards reads pages 2, 3, … to the last; while the calls so far came newest
// first, it stops once they reach back before from.
func (r *unfiltered) forwards(ctx context.Context, from time.Time) error {
	for n := 2; !r.reachedBefore(from); n++ {
		pg, err := r.page(ctx, n)
		if err != nil {
			return err
		}
		r.ord.see(pg.Items)
		if pg.IsLast() {
			return nil
		}
	}
	return nil
}

func (r *unfiltered) reachedBefore(from time.Time) bool {
	return r.ord.newestFirst() && len(r.all) > 0 && dated(r.all[len(r.all)-1].CreatedTime).Before(from)
}

// dated is a created_time as a bound of a list's reach: a null one (zero)
// reaches nowhere, as if it were in the far future.
func dated(t time.Time) time.Time {
	if t.IsZero() {
		return time.Unix(1<<62, 0)
	}
	return t
}

// backwards reads an oldest-first list from page last down to page 2, stopping
// after a page that starts before from. A page out of order (within itself, or
// ending after the start of the page after it) means the order broke: every page
// left is read then.
func (r *unfiltered) backwards(ctx context.Context, last int, from time.Time) error {
	var next time.Time // start of the page after the one read
	for n := last; n > 1; n-- {
		pg, err := r.page(ctx, n)
		if err != nil {
			return err
		}
		if len(pg.Items) == 0 {
			continue
		}
		if !ascendingUpTo(pg.Items, next) {
			return r.pagesDown(ctx, n-1, 2)
		}
		if t := pg.Items[0].CreatedTime; !t.IsZero() {
			next = t
		}
		if dated(pg.Items[0].CreatedTime).Before(from) {
			return nil
		}
	}
	return nil
}

// pagesDown reads pages hi down to lo.
func (r *unfiltered) pagesDown(ctx context.Context, hi, lo int) error {
	for n := hi; n >= lo; n-- {
		if _, err := r.page(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// reread reads the whole list again, twice at most, until it held total distinct
// calls: a list in no order that reshuffles between requests can hide records
// from one pass.
func (r *unfiltered) reread(ctx context.Context, total int) error {
	r.rereading = true
	for pass := 0; pass < 2 && distinctCalls(r.all)+r.rejected < total; pass++ {
		for n := 1; ; n++ {
			pg, err := r.page(ctx, n)
			if err != nil {
				return err
			}
			if pg.IsLast() {
				break
			}
		}
	}
	return nil
}

// listOrder tracks which created_time orders the calls seen so far allow.
type listOrder struct {
	asc, desc, started bool
	prev               time.Time
}

func (o *listOrder) see(cs []events.Call) {
	for _, c := range cs {
		o.seeTime(c.CreatedTime)
	}
}

// seeTime takes the next created_time in reading order into account; a record
// without one says nothing of the order.
func (o *listOrder) seeTime(t time.Time) {
	switch {
	case t.IsZero():
		return
	case !o.started:
		o.asc, o.desc, o.started = true, true, true
	case t.Before(o.prev):
		o.asc = false
	case t.After(o.prev):
		o.desc = false
	}
	o.prev = t
}

func (o listOrder) oldestFirst() bool { return o.asc && !o.desc }
func (o listOrder) newestFirst() bool { return o.desc && !o.asc }

// unordered: neither order holds, or nothing was seen yet.
func (o listOrder) unordered() bool { return !o.asc && !o.desc }

// ascendingUpTo reports whether cs are oldest first and, when next is set, none
// is after it.
func ascendingUpTo(cs []events.Call, next time.Time) bool {
	var o listOrder
	o.see(cs)
	return o.asc && (next.IsZero() || !o.prev.After(next))
}

// lastPage is the number of pages meta reported (0 without meta), no more than
// its total_count fills at per a page: an absurd total_pages must not send the
// reader down millions of empty pages.
func lastPage(pg Page[events.Call], per int) int {
	if pg.Meta == nil {
		return 0
	}
	n := pg.Meta.TotalPages
	if tc := pg.Meta.TotalCount; tc > 0 && per > 0 {
		n = min(n, (tc+per-1)/per)
	}
	return n
}

func createdSince(cs []events.Call, from time.Time) []events.Call {
	out := cs[:0:0]
	for _, c := range cs {
		if !dated(c.CreatedTime).Before(from) { // null: kept, the poller decides
			out = append(out, c)
		}
	}
	return out
}

// lastCopies drops repeated calls (page boundaries repeat records when the list
// moves under the reader), keeping each call where first read with its last copy
// read, which is the freshest.
func lastCopies(cs []events.Call) []events.Call {
	idx := make(map[int64]int, len(cs))
	out := cs[:0:0]
	for _, c := range cs {
		if i, ok := idx[c.ID]; ok {
			out[i] = c
			continue
		}
		idx[c.ID] = len(out)
		out = append(out, c)
	}
	return out
}

func distinctCalls(cs []events.Call) int {
	seen := make(map[int64]struct{}, len(cs))
	for _, c := range cs {
		seen[c.ID] = struct{}{}
	}
	return len(seen)
}
