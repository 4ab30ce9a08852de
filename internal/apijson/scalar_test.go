package apijson

import (
	"testing"
	"time"
)

func TestScalars(t *testing.T) {
	ints := []struct {
		in   string
		want int64
		ok   bool
	}{
		{`12`, 12, true}, {`"12"`, 12, true}, {`12.0`, 12, true}, {`"12.0"`, 12, true}, {`1.2e1`, 12, true},
		{` "  7 " `, 7, true}, {`-3`, -3, true}, {`null`, 0, false}, {`""`, 0, false}, {`9007199254740993`, 9007199254740993, true},
	}
	for _, tt := range ints {
		v, ok, err := ParseInt([]byte(tt.in))
		if err != nil || v != tt.want || ok != tt.ok {
			t.Errorf("ParseInt(%s) = %d, %v, %v; want %d, %v", tt.in, v, ok, err, tt.want, tt.ok)
		}
	}
	floats := []struct {
		in   string
		want float64
		ok   bool
	}{{`1`, 1, true}, {`0.0125`, 0.0125, true}, {`"0.50"`, 0.5, true}, {`null`, 0, false}, {`""`, 0, false}}
	for _, tt := range floats {
		v, ok, err := ParseFloat([]byte(tt.in))
		if err != nil || v != tt.want || ok != tt.ok {
			t.Errorf("ParseFloat(%s) = %v, %v, %v", tt.in, v, ok, err)
		}
	}
	bools := []struct {
		in       string
		want, ok bool
	}{{`true`, true, true}, {`"false"`, false, true}, {`1`, true, true}, {`"0"`, false, true}, {`1.0`, true, true}, {`null`, false, false}}
	for _, tt := range bools {
		v, ok, err := ParseBool([]byte(tt.in))
		if err != nil || v != tt.want || ok != tt.ok {
			t.Errorf("ParseBool(%s) = %v, %v, %v", tt.in, v, ok, err)
		}
	}
	times := []struct{ in, want string }{
		{`"2024-03-05T10:15:30Z"`, "2024-03-05T10:15:30Z"},
		{`"2024-03-05T11:15:30+01:00"`, "2024-03-05T10:15:30Z"},
		{`"2024-03-05T11:15:30.123+01:00"`, "2024-03-05T10:15:30.123Z"},
		{`"2024-03-05T11:15:30+0100"`, "2024-03-05T10:15:30Z"},
		{`"2024-03-05 10:15:30Z"`, "2024-03-05T10:15:30Z"},
		{`"2024-03-05T10:15:30"`, "2024-03-05T10:15:30Z"},
		{`"2024-03-05"`, "2024-03-05T00:00:00Z"},
		{`"2024-03-05T10:15+05:30"`, "2024-03-05T04:45:00Z"},
	}
	for _, tt := range times {
		v, ok, err := ParseTime([]byte(tt.in))
		if err != nil || !ok || v.Format(time.RFC3339Nano) != tt.want || v.Location().String() != "UTC" {
			t.Errorf("ParseTime(%s) = %v, %v, %v; want %s", tt.in, v, ok, err, tt.want)
		}
	}
	for _, null := range []string{`null`, `""`, `"  "`} {
		if _, ok, err := ParseTime([]byte(null)); ok || err != nil {
			t.Errorf("ParseTime(%s) = %v, %v; want null", null, ok, err)
		}
	}
	if _, _, err := ParseTime([]byte(`"0000-01-01T00:30:00+01:00"`)); err == nil {
		t.Errorf("year -1 accepted")
	}
}
