package apijson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// rec is a record of the tests: scalars, a multi-spelling time and a nested list.
type rec struct {
	ID   int64
	Name string
	At   time.Time
	Subs []sub
}

type sub struct{ N int }

func init() {
	Register(func(s *sub, d *Decoder) error {
		*s = sub{}
		return d.Object("sub", Key("n", Int(&s.N)))
	})
}

func (r *rec) read(d *Decoder) error {
	*r = rec{}
	return d.Object("rec",
		Key("id", Int(&r.ID)),
		Key("name", Str(&r.Name)),
		Keys(Time(&r.At), "timestamp", "time_stamp"),
		Key("subs", Slice(&r.Subs)),
	)
}

func decodeRec(s string) (rec, error) {
	var r rec
	err := Decode([]byte(s), r.read)
	return r, err
}

// The one-pass decoder reads objects as a map of raw values would: the last of a
// key given twice, the preferred spelling whatever the order, escaped keys,
// unknown keys skipped, numbers as strings.
func TestDecoderObject(t *testing.T) {
	at := time.Date(2024, 3, 5, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]rec{
		`{"id":1,"id":"2"}`:  {ID: 2},
		`{"id":1,"id":null}`: {},
		`{"i\u0064":"7","x":{"a":[1,{"b":2}]},"name":"n"}`:                              {ID: 7, Name: "n"},
		`{"time_stamp":"2024-03-05T10:00:00Z","timestamp":null}`:                        {At: at},
		`{"time_stamp":"1999-01-01T00:00:00Z","timestamp":"2024-03-05T10:00:00Z"}`:      {At: at},
		`{"timestamp":"","time_stamp":"2024-03-05T10:00:00Z","subs":[{"n":1},null,{}]}`: {At: at, Subs: []sub{{1}, {}, {}}},
		`{"time\u005fstamp":"2024-03-05T10:00:00Z","\u0069\u0064":3,"i\\d":4}`:          {At: at, ID: 3},
		`null`:         {},
		` {"subs":[]}`: {Subs: []sub{}},
	} {
		got, err := decodeRec(in)
		if err != nil || !equalRec(got, want) {
			t.Errorf("%s: got %+v %v, want %+v", in, got, err, want)
		}
	}
}

func equalRec(a, b rec) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y) && (a.Subs == nil) == (b.Subs == nil)
}

// A bad value is the field's error, named by its path, and the object is read to
// its end; the first failing field in the order of fields is reported. A syntax
// error ends the document.
func TestDecoderErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":{},"id":"x"}`:         `decode rec field "id": want an integer`,
		`{"subs":[{"n":1},{"n":"x"}]}`: `decode rec field "subs": decode sub field "n": want an integer`,
		`{"subs":{}}`:                  `decode rec field "subs": want an array, got object`,
		`[1]`:                          `decode rec: want an object, got array`,
		`{"time_stamp":"yesterday"}`:   `decode rec field "time_stamp": want an ISO 8601 date-time`,
		`{"id":1,}`:                    `invalid JSON`,
		`{"id":1} x`:                   `invalid JSON`,
		``:                             `invalid JSON`,
		`{"subs":[{"n":1},{"n":"x"}`:   `invalid JSON`,
	} {
		_, err := decodeRec(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
	_, err := decodeRec(`{"subs":[{"n":"x"}]}`)
	if path, _ := FieldPath(err); strings.Join(path, ".") != "subs.n" {
		t.Errorf("path %v of %v", path, err)
	}
	var se *SyntaxError
	if _, err := decodeRec(`{"id":`); !errors.As(err, &se) {
		t.Errorf("truncated: %v is no SyntaxError", err)
	}
	// After a field's error, the list goes on with the next item.
	var got []int64
	err = Decode([]byte(`[{"id":"x","subs":[1]},{"id":2}]`), func(d *Decoder) error {
		return d.Array(func() error {
			var r rec
			err := r.read(d)
			got = append(got, r.ID)
			return err
		})
	})
	if err == nil || len(got) != 2 || got[1] != 2 {
		t.Errorf("items %v, err %v; want both read and the first's error", got, err)
	}
}
