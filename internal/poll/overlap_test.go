package poll

import (
	"errors"
	"slices"
	"testing"
)

// Pages reach the handler in order, each once; after the handler's first error,
// add returns it (the reader stops) and wait reports it.
func TestOverlapKeepsOrderAndStopsAtTheFirstError(t *testing.T) {
	var got []int
	o := startOverlap(func(page []int) error {
		got = append(got, page...)
		return nil
	})
	for i := range 5 {
		if err := o.add([]int{2 * i, 2*i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.wait(); err != nil || !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("wait = %v, handled %v", err, got)
	}

	boom := errors.New("boom")
	handled := 0
	o = startOverlap(func([]int) error { handled++; return boom })
	var addErr error
	for range 5 {
		if addErr = o.add([]int{1}); addErr != nil {
			break
		}
	}
	if err := o.wait(); !errors.Is(err, boom) || !errors.Is(addErr, boom) || handled != 1 {
		t.Fatalf("wait = %v, add = %v, handled %d pages; want boom, boom, 1", err, addErr, handled)
	}
}
