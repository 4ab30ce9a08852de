package apijson

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// walk reads the next value with every reader of the Decoder (Peek, Value,
// Skip, Object with plain and multi-spelling keys, Array, NormValue, Mark and
// Span) and writes what each gave to out, so that two paths reading a document
// can be compared token by token.
func walk(d *Decoder, out *strings.Builder) error {
	mark := d.Mark()
	k := d.Peek()
	fmt.Fprintf(out, "%c", k)
	var err error
	switch k {
	case '{':
		var (
			id  int64
			at  time.Time
			s   string
			opt *string
			raw json.RawMessage
		)
		err = d.Object("o",
			Key("a", func(d *Decoder) error { return walk(d, out) }),
			Key("id", Int(&id)),
			Keys(Time(&at), "timestamp", "time_stamp"),
			Key("s", Str(&s)),
			Key("o", OptStr(&opt)),
			Key("r", Raw(&raw)),
			Key("b", func(d *Decoder) error { return walk(d, out) }),
		)
		fmt.Fprintf(out, "{%d %v %q %v %q}", id, at, s, opt != nil, raw)
	case '[':
		n := 0
		err = d.Array(func() error {
			n++
			if n%3 == 0 {
				return d.Skip()
			}
			return walk(d, out)
		})
	case 'n':
		err = d.Skip()
	default:
		var v []byte
		v, err = d.Value()
		fmt.Fprintf(out, "%q", v)
	}
	fmt.Fprintf(out, " span %q err %v\n", d.Span(mark), err)
	return err
}

// bothPaths reads data with walk on the fast path and on the general path and
// fails t if they differ; it returns whether the fast path gave up.
func bothPaths(t *testing.T, data []byte) bool {
	t.Helper()
	var fast, general strings.Builder
	fellBack, errFast := decodeOn(data, false, true, func(d *Decoder) error {
		fast.Reset() // a second pass, when the fast path gave up, starts over
		return walk(d, &fast)
	})
	errGeneral := DecodeGeneral(data, func(d *Decoder) error { return walk(d, &general) })
	if fmt.Sprint(errFast) != fmt.Sprint(errGeneral) || fast.String() != general.String() {
		f, g := strings.Split(fast.String(), "\n"), strings.Split(general.String(), "\n")
		i := 0
		for i < len(f) && i < len(g) && f[i] == g[i] {
			i++
		}
		f, g = append(f, ""), append(g, "")
		t.Fatalf("%.200q:\nfast (fell back: %v): %v\n  line %d: %.300s\ngeneral: %v\n  line %d: %.300s", data, fellBack, errFast, i, f[i], errGeneral, i, g[i])
	}
	return fellBack
}

// fastCorpus is well-formed JSON the fast path reads itself, and JSON it gives
// up on: syntax errors of every kind, escapes, deep nesting.
var fastCorpus = []string{
	`{"a":{"id":"12","s":"x","o":""},"timestamp":"","time_stamp":"2024-03-05T10:00:00+01:00"}`,
	` { "a" : [ 1 , -2.5e+3 , "x\/y" , true , false , null , {} , [] ] , "r" : { "k" : [1, 2] } } `,
	"{\"s\":\"caf\xc3\xa9\",\"o\":\"\xff\",\"b\":\"\\u00e9\\ud800\"}",
	`{"i\u0064":1,"s":"a\"b\\c\n","b":{"a":{"a":{"a":[[[[]]]]}}}}`,
	`[0,-0,0.0,1e5,1E-5,123456789012345678901234567890]`,
	`{"id":1,"id":null,"id":"3"}`, `""`, `"x"`, `12`, `null`, `true`, `[]`, `{}`,
	`{"id":01}`, `{"id":1.}`, `{"id":-}`, `{"id":1e}`, `{"id":.5}`, `{"id":+1}`, `[1,]`, `[,1]`, `{"a":1,}`,
	`{,"a":1}`, `{"a" 1}`, `{"a":1 "b":2}`, `{a:1}`, `{'a':1}`, `[1 2]`, `[1}`, `{"a":1]`, `[nul]`,
	`[truex]`, `[1true]`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\tb\"", "\"a\x00\"", `"abc`, `[`, `{`, `{"a"`,
	`{"a":`, ``, ` `, `[] []`, `{}x`, `1 2`, "\xef\xbb\xbf{}", `{"a":[1,2,{"b":3}`, `nul`, `-`,
	strings.Repeat("[", 70) + strings.Repeat("]", 70), strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
	strings.Repeat("[", 63) + strings.Repeat("]", 63),
}

// The fast path reads every document as the general path does (same tokens,
// spans, values and errors), and gives up only on what it does not read:
// here, the API's fixtures, which are read on the fast path whole.
func TestFastPathAsGeneralPath(t *testing.T) {
	for _, s := range fastCorpus {
		bothPaths(t, []byte(s))
	}
	files, err := filepath.Glob("../callcenter/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if bothPaths(t, data) {
			t.Errorf("%s: the fast path gave up on a fixture", name)
		}
		// Every prefix: a body cut anywhere.
		for i := range len(data) {
			bothPaths(t, data[:i])
		}
	}
}

func FuzzFastPathAsGeneralPath(f *testing.F) {
	for _, s := range fastCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { bothPaths(t, data) })
}
