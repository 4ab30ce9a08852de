package backfill

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// TestScannerValues: values end where their JSON ends, whatever their strings
// hold (quotes, brackets, escapes) and wherever the reads cut them (one byte
// at a time); passed-over values are not returned; a value cut short is a
// reportError.
func TestScannerValues(t *testing.T) {
	doc := ` { "a\"b" : [ {"s":"x]}\\\"{[","n":[1,[2]]} , 12 ,"str,]" ,true, null ] , "skip":{"k":["]"]}, "last":-1.5e3 } `
	for name, r := range map[string]func() *scanner{
		"whole":    func() *scanner { return newScanner(strings.NewReader(doc)) },
		"one byte": func() *scanner { return newScanner(iotest.OneByteReader(strings.NewReader(doc))) },
	} {
		sc := r()
		var got []string
		err := sc.object(func(key string) error {
			got = append(got, "key "+key)
			switch key {
			case "skip":
				v, err := sc.value(false)
				if v != nil {
					t.Errorf("%s: a value passed over returned %q", name, v)
				}
				return err
			case "last":
				v, err := sc.value(true)
				got = append(got, string(v))
				return err
			}
			return sc.array(key, func(raw []byte) error { got = append(got, string(raw)); return nil })
		})
		want := `key a"b|{"s":"x]}\\\"{[","n":[1,[2]]}|12|"str,]"|true|null|key skip|key last|-1.5e3`
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("%s: got %q (%v), want %q", name, strings.Join(got, "|"), err, want)
		}
	}
	for _, bad := range []string{`{"calls":[{"id":1}`, `{"calls" [1]}`, `{"calls":[1 2]}`, `{"calls":[{"id":"1]}`, `[1]`, ``} {
		sc := newScanner(strings.NewReader(bad))
		err := sc.object(func(key string) error { return sc.array(key, func([]byte) error { return nil }) })
		if re := (*reportError)(nil); !errors.As(err, &re) {
			t.Errorf("%q: %v, want a reportError", bad, err)
		}
	}
}

// TestReadBothPasses: a report listing calls and users before the metrics is
// read once for both passes, the metrics announced as the second pass begins;
// one listing a resource of the first pass after the metrics is read in two.
func TestReadBothPasses(t *testing.T) {
	metric := `{"id":9,"call_id":1,"created_time":"2024-01-01T09:00:00Z"}`
	doc := `{"calls":[` + call(1, "09:10", "") + `],"users":[{"id":3}],"call_metrics":[` + metric + `]}`
	want := []string{"calls", "call_metrics", "users"}
	idx, err := indexReport(strings.NewReader(doc), want)
	if err != nil || !idx.layout.inOrder() {
		t.Fatalf("layout %v (%v), want in order", idx.layout, err)
	}
	pr := &passReader{api: (&rejections{}).client(t), op: "r", want: want}
	rec := &recorder{}
	if err := pr.read(strings.NewReader(doc), 0, 1, rec); err != nil || strings.Join(rec.got, " ") != "c1@09:10 u3 |1 m1" {
		t.Errorf("got %q (%v)", strings.Join(rec.got, " "), err)
	}
	doc = `{"calls":[` + call(1, "09:10", "") + `],"call_metrics":[` + metric + `],"users":[{"id":3}]}`
	if idx, _ := indexReport(strings.NewReader(doc), want); idx.layout.inOrder() {
		t.Errorf("layout %v: users after the metrics taken for in order", idx.layout)
	}
	if err := pr.read(strings.NewReader(doc), 0, 1, &recorder{}); err == nil {
		t.Error("a read of both passes took a first-pass resource after the metrics")
	}
}

// BenchmarkIndexReport: the scanner and the id of each record, over calls as
// the simulator exports them (about 1.5 KB each).
func BenchmarkIndexReport(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"calls":[`)
	part := `{"id":8,"created_time":"2024-01-01T09:00:00Z","name":"Agent \"Smith\" \\ ops","tags":["a","b"]}`
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(call(i+1, "09:10", strings.Repeat(part+",", 10)+part))
	}
	sb.WriteString(`]}`)
	doc := sb.String()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := indexReport(strings.NewReader(doc), []string{"calls"}); err != nil {
			b.Fatal(err)
		}
	}
}
