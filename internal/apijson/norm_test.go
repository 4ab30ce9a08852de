package apijson

import (
	"bytes"
	"testing"
)

// normValue must give what NormRaw gives for every value the Decoder reads.
func checkNormEquiv(t *testing.T, data []byte) {
	t.Helper()
	_ = Decode(data, func(d *Decoder) error {
		raw, err := d.Value()
		if err != nil {
			return err
		}
		got, gerr := normValue(raw)
		want, werr := NormRaw(raw)
		if !bytes.Equal(got, want) || (gerr == nil) != (werr == nil) {
			t.Errorf("normValue(%q) = %q, %v; want %q, %v", raw, got, gerr, want, werr)
		}
		if len(raw) > 0 && len(got) > 0 && &got[0] == &raw[0] {
			t.Errorf("normValue(%q) shares the input", raw)
		}
		return nil
	})
}

func TestNormValueEquivalence(t *testing.T) {
	for _, s := range []string{
		`null`, `1`, `"a"`, `{"id":1,"participants":[4432]}`, `{ "id": 1 }`,
		`"<b>&"`, `"\u2028"`, "\"\u2028\"", `"\/x"`, "\"\xff\xfe\"", `[1,2,{"a":null}]`,
		`{"a":1,"a":2}`, "\"\xe2\x80\"", `1.50e+3`, `-0`,
		`{"name":"follow up"}`, `{"q":"a\" b","r":"c\\"," d":[ 1]}`, `["x\\", "y"]`, `{"a":"\" "}`,
	} {
		checkNormEquiv(t, []byte(s))
	}
}

func FuzzNormValue(f *testing.F) {
	f.Add([]byte(`{"id":1,"participants":[4432]}`))
	f.Add([]byte("\"\u2028<\""))
	f.Fuzz(checkNormEquiv)
}
