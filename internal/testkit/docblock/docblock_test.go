package docblock

import "testing"

func TestReplace(t *testing.T) {
	const beginMarker, endMarker = "<!-- x:begin -->", "<!-- x:end -->"
	m := Markers{beginMarker, endMarker}
	docs := "| a |\n|---|\n"
	tests := []struct {
		name, text, want string
		same             bool
		err              bool
	}{
		{"in step", "x\n" + beginMarker + "\n| a |\n|---|\n\n" + endMarker + "\ny", "x\n" + beginMarker + "\n" + docs + endMarker + "\ny", true, false},
		{"stale", "x\n" + beginMarker + "\nold\n" + endMarker + "\ny", "x\n" + beginMarker + "\n" + docs + endMarker + "\ny", false, false},
		{"no markers", "x", "", false, true},
		{"markers reversed", endMarker + "\n" + beginMarker + "\n", "", false, true},
		{"markers on one line", beginMarker + endMarker + "\n", "", false, true},
		{"marker in a table cell only", "| a | keep `" + beginMarker + "` |\n" + docs + endMarker + "\n", "", false, true},
		{"marker quoted in prose too", "see `" + beginMarker + "`\n" + beginMarker + "\nold\n" + endMarker + "\n",
			"see `" + beginMarker + "`\n" + beginMarker + "\n" + docs + endMarker + "\n", false, false},
		{"begin twice", beginMarker + "\n" + beginMarker + "\n" + endMarker + "\n", "", false, true},
		{"end missing", beginMarker + "\n" + docs, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, same, err := m.Replace(tt.text, docs)
			if (err != nil) != tt.err || got != tt.want || same != tt.same {
				t.Errorf("got %q, %v, %v; want %q, %v, error %v", got, same, err, tt.want, tt.same, tt.err)
			}
		})
	}
}
