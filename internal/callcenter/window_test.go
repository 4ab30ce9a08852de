package callcenter

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fakeList serves records created one a second from t0, a page at a time, in a
// fresh random order per request when shuffle is set (as the simulator's random
// order does), with or without meta.
type fakeList struct {
	n        int
	perPage  int
	shuffle  bool
	meta     bool
	rnd      *rand.Rand
	requests int
}

var w0 = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

// fakeKeys: record i of a fakeList was created at w0 + i seconds.
var fakeKeys = recordKeys[int64]{
	id:      func(v int64) int64 { return v },
	created: func(v int64) time.Time { return w0.Add(time.Duration(v) * time.Second) },
}

func (f *fakeList) page(_ context.Context, w TimeWindow, n, _ int) (Page[int64], error) {
	f.requests++
	var in []int64
	for i := range f.n {
		at := w0.Add(time.Duration(i) * time.Second)
		if !at.Before(w.From) && at.Before(w.To) {
			in = append(in, int64(i))
		}
	}
	if f.shuffle {
		f.rnd.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
	}
	pg := Page[int64]{Number: n, PerPage: f.perPage}
	if f.meta {
		pg.Meta = &Meta{TotalCount: len(in), TotalPages: (len(in) + f.perPage - 1) / f.perPage, Current: n}
	}
	if lo := (n - 1) * f.perPage; lo < len(in) {
		pg.Items = in[lo:min(lo+f.perPage, len(in))]
	}
	return pg, nil
}

func TestReadWindowComplete(t *testing.T) {
	for _, tc := range []struct {
		name          string
		shuffle, meta bool
	}{
		{"stable order with meta", false, true},
		{"random order with meta", true, true},
		{"stable order without meta", false, false},
		{"random order without meta", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeList{n: 2500, perPage: 100, shuffle: tc.shuffle, meta: tc.meta, rnd: rand.New(rand.NewPCG(1, 2))}
			var got []int64
			err := readWindow(t.Context(), f.page, TimeWindow{From: w0, To: w0.Add(24 * time.Hour)}, f.perPage, fakeKeys, nil,
				func(page []int64) error { got = append(got, page...); return nil })
			if err != nil {
				t.Fatal(err)
			}
			got = slices.Compact(slices.Sorted(slices.Values(got)))
			if len(got) != 2500 {
				t.Fatalf("got %d distinct records, want 2500", len(got))
			}
			// A stable list reads each page once, with meta or without (then an
			// empty page more ends it); a shuffled one in pieces of one page costs
			// about two requests per page of records, plus the first look.
			limit := 25 * 4
			if !tc.shuffle {
				limit = map[bool]int{true: 25, false: 26}[tc.meta]
			}
			if f.requests > limit {
				t.Errorf("%d requests for 25 pages of records, want at most %d", f.requests, limit)
			}
			t.Logf("%d requests", f.requests)
		})
	}
}

// A window read in pages that held one record fewer than meta.total_count said
// (one moved onto a page already read) is read again in pieces.
func TestReadWindowMissingOne(t *testing.T) {
	f := &fakeList{n: 300, perPage: 100, meta: true}
	var moved int64 = -1
	fetch := func(ctx context.Context, w TimeWindow, n, per int) (Page[int64], error) {
		pg, err := f.page(ctx, w, n, per)
		if f.requests == 2 && len(pg.Items) > 0 {
			moved, pg.Items = pg.Items[0], pg.Items[1:]
		}
		return pg, err
	}
	got := map[int64]bool{}
	err := readWindow(t.Context(), fetch, TimeWindow{From: w0, To: w0.Add(time.Hour)}, 100, fakeKeys, nil,
		func(page []int64) error {
			for _, v := range page {
				got[v] = true
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 300 || !got[moved] {
		t.Errorf("got %d distinct records (record %d: %v), want 300", len(got), moved, got[moved])
	}
}

// onlyOnce drops copies already handed on and does not hand on a page left empty.
func TestOnlyOnce(t *testing.T) {
	var pages [][]int64
	each := onlyOnce(func(v int64) int64 { return v }, func(p []int64) error { pages = append(pages, p); return nil })
	for _, p := range [][]int64{{1, 2}, {2, 1}, {2, 3}} {
		if err := each(p); err != nil {
			t.Fatal(err)
		}
	}
	if want := [][]int64{{1, 2}, {3}}; !slices.EqualFunc(pages, want, slices.Equal) {
		t.Errorf("pages handed %v, want %v", pages, want)
	}
}
