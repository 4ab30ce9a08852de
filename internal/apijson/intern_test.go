package apijson

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// Strings read by one decoder share their bytes when their text repeats, read
// as encoding/json would (escapes, numbers as text), and the table stays bounded.
func TestDecoderSharesStrings(t *testing.T) {
	long := strings.Repeat("x", maxInternLen+1)
	var got []string
	var opt *string
	err := Decode([]byte(`["seconds", "seconds", "sec\u006fnds", 12, "`+long+`", "`+long+`", null]`), func(d *Decoder) error {
		return d.Array(func() error {
			var s string
			if d.Peek() == 'n' {
				return OptStr(&opt)(d)
			}
			err := Str(&s)(d)
			got = append(got, s)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"seconds", "seconds", "seconds", "12", long, long}
	if fmt.Sprint(got) != fmt.Sprint(want) || opt != nil {
		t.Fatalf("got %q (null: %v), want %q", got, opt, want)
	}
	if unsafe.StringData(got[0]) != unsafe.StringData(got[1]) || unsafe.StringData(got[0]) != unsafe.StringData(got[2]) {
		t.Errorf("a repeated short string was not shared")
	}
	// The table has a fixed number of slots: many distinct texts replace one
	// another, and each is still read right.
	d := new(Decoder)
	for i := range 6 * internSets {
		text := fmt.Appendf(nil, "n%d", i)
		if s1, s2 := d.str(text), d.str(text); s1 != string(text) || unsafe.StringData(s1) != unsafe.StringData(s2) {
			t.Fatalf("%q read as %q, %q (shared: %v)", text, s1, s2, unsafe.StringData(s1) == unsafe.StringData(s2))
		}
	}
}
