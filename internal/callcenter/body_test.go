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
		name  string
		size  int64
		limit int64
		want  string
	}{
		{"known", 10, 100, text},
		{"unknown", -1, 100, text},
		{"larger than the limit", 10, 5, text[:5]},
		{"announced short", 4, 100, text},
	} {
		b, err := readBody(strings.NewReader(text), tc.size, tc.limit)
		if err != nil || string(b.data) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, b.data, err, tc.want)
		}
		b.release()
	}
	big := body{pooled: bytes.NewBuffer(make([]byte, 0, maxPooledBody+1))}
	big.release() // dropped, not kept: no way to observe but no panic either
}

// A released body's buffer serves the next body that fits in it; the largest
// released is kept, none over maxPooledBody.
func TestReadBodyReuses(t *testing.T) {
	keptBody.Lock()
	keptBody.buf = nil
	keptBody.Unlock()
	first, err := readBody(strings.NewReader(strings.Repeat("a", 4000)), 4000, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	first.release()
	second, err := readBody(strings.NewReader("short"), 5, 1<<20)
	if err != nil || string(second.data) != "short" {
		t.Fatalf("got %q, %v", second.data, err)
	}
	if &second.data[:1][0] != &first.data[:1][0] {
		t.Errorf("a body that fits the kept buffer was read into a new one")
	}
	second.release()
	var held []body
	for _, n := range []int{100, 20000, 9000} {
		b, err := readBody(strings.NewReader(strings.Repeat("b", n)), int64(n), 1<<20)
		if err != nil || len(b.data) != n {
			t.Fatalf("%d bytes: got %d, %v", n, len(b.data), err)
		}
		held = append(held, b)
	}
	for _, b := range held {
		b.release()
	}
	(body{pooled: bytes.NewBuffer(make([]byte, 0, maxPooledBody+1))}).release()
	keptBody.Lock()
	defer keptBody.Unlock()
	if c := keptBody.buf.Cap(); c < 20000 || c > maxPooledBody {
		t.Errorf("kept a buffer of %d bytes: want the largest released (20000+), none over %d", c, maxPooledBody)
	}
}
