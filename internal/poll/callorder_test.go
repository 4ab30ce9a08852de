package poll

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// oldestFirst gives what a stable sort of the calls by created_time and id
// gives, the API's order kept among equals (the same id listed twice, the
// same time), for lists in order, newest first, and shuffled.
func TestOldestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for n := range 300 {
		calls := make([]events.Call, n)
		for i := range calls {
			calls[i] = events.Call{ID: int64(rng.IntN(n/2 + 1)), CreatedTime: at.Add(time.Duration(rng.IntN(n/3+1)) * time.Second),
				PhoneNumber: string(rune('a' + i%26))} // tells copies of one id apart
		}
		switch n % 3 {
		case 1:
			slices.SortFunc(calls, func(a, b events.Call) int { return b.CreatedTime.Compare(a.CreatedTime) })
		case 2:
			slices.SortStableFunc(calls, func(a, b events.Call) int { return a.CreatedTime.Compare(b.CreatedTime) })
		}
		want := slices.Clone(calls)
		slices.SortStableFunc(want, func(a, b events.Call) int {
			if c := a.CreatedTime.Compare(b.CreatedTime); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		oldestFirst(calls)
		for i := range calls {
			if calls[i].ID != want[i].ID || !calls[i].CreatedTime.Equal(want[i].CreatedTime) || calls[i].PhoneNumber != want[i].PhoneNumber {
				t.Fatalf("%d calls: at %d got %d %s %s, want %d %s %s", n, i, calls[i].ID, calls[i].CreatedTime, calls[i].PhoneNumber,
					want[i].ID, want[i].CreatedTime, want[i].PhoneNumber)
			}
		}
	}
}

// BenchmarkOldestFirst: a page of 1,000 calls listed newest first, put in
// order by oldestFirst and (stable-sort) by sorting the calls themselves.
func BenchmarkOldestFirst(b *testing.B) {
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	page := make([]events.Call, 1000)
	for i := range page {
		page[i] = events.Call{ID: int64(2000 - i), CreatedTime: at.Add(-time.Duration(i) * time.Second)}
	}
	calls := make([]events.Call, len(page))
	b.Run("oldestFirst", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(calls, page)
			oldestFirst(calls)
		}
	})
	b.Run("stable-sort", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(calls, page)
			slices.SortStableFunc(calls, func(a, b events.Call) int {
				if c := a.CreatedTime.Compare(b.CreatedTime); c != 0 {
					return c
				}
				return cmp.Compare(a.ID, b.ID)
			})
		}
	})
}
