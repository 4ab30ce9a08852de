package apijson

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// The fast path of ParseTime must give exactly what TimeText gives (the same
// time.Time, location included) for every text it accepts.
func checkRFC3339Equiv(t *testing.T, s string) {
	t.Helper()
	got, ok := rfc3339UTC([]byte(s))
	if !ok {
		return
	}
	want, err := TimeText(s)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("rfc3339UTC(%q) = %v, want %v (%v)", s, got, want, err)
	}
}

func TestRFC3339UTCEquivalence(t *testing.T) {
	fixed := []struct {
		in   string
		fast bool // taken by the fast path
	}{
		{"2024-03-05T10:15:30Z", true},
		{"2024-03-05T10:15:30.250Z", true},
		{"2024-03-05T10:15:30.123456789Z", true},
		{"2024-03-05T10:15:30.1234567891Z", false},
		{"2024-03-05T10:15:30.Z", false},
		{"2024-03-05T10:15:30+02:00", true},
		{"2024-03-05T00:15:30-11:30", true},
		{"2024-03-05T10:15:30+24:00", false},
		{"2024-03-05T10:15:30+0200", false},
		{"2024-02-29T10:15:30Z", true},
		{"2023-02-29T10:15:30Z", false},
		{"1900-02-29T10:15:30Z", false},
		{"2000-02-29T10:15:30Z", true},
		{"2024-04-31T10:15:30Z", false},
		{"2024-13-05T10:15:30Z", false},
		{"2024-03-05T24:00:00Z", false},
		{"2024-03-05T23:60:00Z", false},
		{"2024-03-05T23:59:60Z", false},
		{"0000-01-01T00:00:00Z", false},
		{"0001-01-01T00:00:00+01:00", false},
		{"9999-12-31T23:59:59-01:00", false},
		{"2024-03-05 10:15:30Z", false},
		{"2024-03-05T10:15:30", false},
		{" 2024-03-05T10:15:30Z", false},
		{"2024-03-05T10:15:30Z ", false},
		{"2024-03-05T1a:15:30Z", false},
		{"+024-03-05T10:15:30Z", false},
		{"2024-03-05T10:15:30,5Z", false},
	}
	for _, c := range fixed {
		if _, ok := rfc3339UTC([]byte(c.in)); ok != c.fast {
			t.Errorf("rfc3339UTC(%q) ok = %v, want %v", c.in, ok, c.fast)
		}
		checkRFC3339Equiv(t, c.in)
	}
	// Random dates near the edges of every field.
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(vals ...int) int { return vals[r.IntN(len(vals))] }
	for range 20000 {
		frac := []string{"", ".5", ".25", ".123456789", ".000000001"}[r.IntN(5)]
		zone := []string{"Z", "+00:00", "-00:00", "+05:30", "-12:00", "+23:59", "-23:59"}[r.IntN(7)]
		s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d%s%s",
			pick(1, 2, 1970, 2000, 2024, 2100, 9998, 9999, r.IntN(10000)),
			pick(1, 2, 12, r.IntN(14)), pick(1, 28, 29, 30, 31, r.IntN(33)),
			r.IntN(25), r.IntN(61), r.IntN(61), frac, zone)
		checkRFC3339Equiv(t, s)
	}
}

func FuzzRFC3339UTC(f *testing.F) {
	f.Add("2024-03-05T10:15:30.250Z")
	f.Add("2024-03-05T10:15:30+02:00")
	f.Add("2024-02-29T23:59:59-23:59")
	f.Fuzz(func(t *testing.T, s string) { checkRFC3339Equiv(t, s) })
}
