package callcenter

import (
	"bytes"
	"github.com/callbus/callbus/events"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A list decoded without Raw is the list decoded with it, Raw aside.
func TestDecodeListWithoutRaw(t *testing.T) {
	for _, tc := range []struct{ file, key string }{
		{"calls_page.json", "calls"}, {"call_metrics_page.json", "call_metrics"},
	} {
		body := fixture(t, tc.file)
		switch tc.key {
		case "calls":
			with, err1 := decodeListRaw[events.Call](body, tc.key, true)
			without, err2 := decodeListRaw[events.Call](body, tc.key, false)
			if err1 != nil || err2 != nil || len(with.items) == 0 {
				t.Fatalf("%s: %v, %v", tc.file, err1, err2)
			}
			for i := range with.items {
				if len(with.items[i].Raw) == 0 || without.items[i].Raw != nil {
					t.Errorf("%s item %d: Raw %d bytes with, %d without", tc.file, i, len(with.items[i].Raw), len(without.items[i].Raw))
				}
				with.items[i].Raw = nil
			}
			if !reflect.DeepEqual(with.items, without.items) {
				t.Errorf("%s: got %+v without Raw, want %+v", tc.file, without.items, with.items)
			}
		case "call_metrics":
			with, err1 := decodeListRaw[events.CallMetric](body, tc.key, true)
			without, err2 := decodeListRaw[events.CallMetric](body, tc.key, false)
			if err1 != nil || err2 != nil || len(with.items) == 0 {
				t.Fatalf("%s: %v, %v", tc.file, err1, err2)
			}
			for i := range with.items {
				if without.items[i].Raw != nil {
					t.Errorf("%s item %d: Raw kept", tc.file, i)
				}
				with.items[i].Raw = nil
			}
			if !reflect.DeepEqual(with.items, without.items) {
				t.Errorf("%s: got %+v without Raw, want %+v", tc.file, without.items, with.items)
			}
		}
	}
}

// onlyOnce hands on a page without copies as it is, and a page with some as a
// new slice, leaving the page handed to it untouched.
func TestOnlyOnceNoCopy(t *testing.T) {
	var got [][]int64
	each := onlyOnce(func(v int64) int64 { return v }, func(p []int64) error { got = append(got, p); return nil })
	first := []int64{1, 2, 3}
	second := []int64{4, 2, 5, 3, 6}
	for _, p := range [][]int64{first, second} {
		if err := each(p); err != nil {
			t.Fatal(err)
		}
	}
	if &got[0][0] != &first[0] {
		t.Errorf("a page without copies was copied")
	}
	if !slices.Equal(got[1], []int64{4, 5, 6}) || !slices.Equal(second, []int64{4, 2, 5, 3, 6}) {
		t.Errorf("handed %v (page now %v), want [4 5 6] (page unchanged)", got[1], second)
	}
}

// readBody reads the whole body, whether its size is known, unknown or wrong,
// and stops at the limit.
func TestReadBody(t *testing.T) {
	const text = "0123456789"
	for _, tc := range []struct {
		name   string
		size   int64
		limit  int64
		want   string
		pooled bool
	}{
		{"known", 10, 100, text, false},
		{"unknown", -1, 100, text, true},
		{"larger than the limit", 10, 5, text[:5], true},
		{"announced short", 4, 100, text, false},
	} {
		b, err := readBody(strings.NewReader(text), tc.size, tc.limit)
		if err != nil || string(b.data) != tc.want || (b.pooled != nil) != tc.pooled {
			t.Errorf("%s: got %q (pooled %v), %v; want %q (pooled %v)", tc.name, b.data, b.pooled != nil, err, tc.want, tc.pooled)
		}
		b.release()
	}
	big := body{pooled: bytes.NewBuffer(make([]byte, 0, maxPooledBody+1))}
	big.release() // dropped, not kept: no way to observe but no panic either
}
