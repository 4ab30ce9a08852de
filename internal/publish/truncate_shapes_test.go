package publish

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/schemas"
)

// inflate makes an oversized shape of an example body: rng picks strings (at any
// depth, list elements included) to grow to up to maxString bytes and lists to
// repeat their elements up to maxRepeat times. A shape the schemas refuse (a
// grown enum) is drawn again, so every shape is a valid event. After half the
// draws only lists grow: a type whose every string is an enum or a date-time
// (account.watermark) rarely draws a valid shape with strings grown, and
// failing on that luck made the test flaky.
func inflate(t *testing.T, v *schemas.Validator, example []byte, rng *rand.Rand, maxString, maxRepeat int) []byte {
	t.Helper()
	const draws = 100
	for i := range draws {
		var env map[string]any
		if err := json.Unmarshal(example, &env); err != nil {
			t.Fatal(err)
		}
		if i == draws/2 {
			maxString = 0
		}
		env["data"] = grow(env["data"], rng, maxString, maxRepeat)
		body, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		if v.Validate(body) == nil {
			return body
		}
	}
	t.Fatalf("no valid oversized shape of %.200s", example)
	return nil
}

// grow returns v with some strings made long and some lists repeated; with
// maxString 0 no string changes. Keys are visited in order so a seed gives
// the same shapes on every run.
func grow(v any, rng *rand.Rand, maxString, maxRepeat int) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			c := x[k]
			if c == nil && (k == "previous" || k == "current") && maxString > 0 && rng.IntN(3) == 0 {
				// A change of notes that were null: free text where the record had none.
				x[k] = strings.Repeat("x", rng.IntN(maxString+1))
				continue
			}
			x[k] = grow(c, rng, maxString, maxRepeat)
		}
	case []any:
		if len(x) > 0 && rng.IntN(2) == 0 {
			n := len(x) * (1 + rng.IntN(maxRepeat))
			out := make([]any, n)
			for i := range out {
				b, _ := json.Marshal(x[i%len(x)]) // deep copy: each element is cut on its own
				_ = json.Unmarshal(b, &out[i])
			}
			x = out
		}
		for i, c := range x {
			x[i] = grow(c, rng, maxString, maxRepeat)
		}
		return x
	case string:
		if _, err := time.Parse(time.RFC3339, x); err != nil && maxString > 0 && rng.IntN(3) == 0 {
			return x + strings.Repeat("né ", rng.IntN(maxString/4+1))
		}
	}
	return v
}

// TestFitShapesValidate reduces oversized shapes of every event type to limits
// between the last-resort form and the original size and checks each reduced
// body: within the limit, valid against schemas/, its marker naming what was
// cut, and, when only strings were cut, the room up to the limit used.
func TestFitShapesValidate(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	examples := schemas.Examples()
	types := slices.Sorted(func(yield func(string) bool) {
		for k := range examples {
			if !yield(k) {
				return
			}
		}
	})
	if len(types) != len(events.Catalog) {
		t.Fatalf("%d examples for %d types", len(types), len(events.Catalog))
	}
	rng := rand.New(rand.NewPCG(23, 8))
	for _, typ := range types {
		for i := range 8 {
			body := inflate(t, v, examples[typ], rng, 40_000, 10)
			// From the last-resort form's size (what fit returns with
			// errCannotFit under any smaller limit) to the original size.
			floor, _, err := fit(body, 0)
			if !errors.Is(err, errCannotFit) {
				t.Fatalf("limit 0: %v, want errCannotFit", err)
			}
			limit := len(floor) + rng.IntN(len(body)-len(floor))
			t.Run(fmt.Sprintf("%s/%d", typ, i), func(t *testing.T) {
				got, mark, err := fit(body, limit)
				if err != nil {
					t.Fatalf("%d bytes to %d: %v", len(body), limit, err)
				}
				checkFit(t, v, body, got, mark, limit)
			})
		}
	}
}

// checkFit checks one reduced body of original against the contract.
func checkFit(t *testing.T, v *schemas.Validator, original, got []byte, mark event.Truncation, limit int) {
	t.Helper()
	if len(got) > limit {
		t.Fatalf("%d bytes over the limit of %d", len(got), limit)
	}
	if err := v.Validate(got); err != nil {
		t.Fatalf("reduced body does not validate: %v\n%.2000s", err, got)
	}
	if mark.OriginalSize != int64(len(original)) || mark.Truncated == "" {
		t.Fatalf("marker %+v for %d bytes", mark, len(original))
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(got, &env); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(mark.Truncated, "=") {
		if string(env.Data) != "{}" {
			t.Fatalf("last resort %s keeps data %s", mark.Truncated, env.Data)
		}
		return
	}
	// Only strings cut: they share one length, the largest that fits, so the
	// room left is under a few bytes per string cut (a character, escaped).
	cuts := strings.Split(mark.Truncated, ",")
	var whole map[string]any
	_ = json.Unmarshal(original, &whole)
	for _, c := range cuts {
		ptr := c[:strings.LastIndex(c, "=")]
		if _, ok := lookup(whole["data"], ptr).([]any); ok {
			return // a list cut keeps whole elements: room under one element may stay
		}
	}
	if room := limit - len(got); room > 12*len(cuts)+32 {
		t.Fatalf("%d bytes of room left under the limit of %d with %d strings cut (%s)", room, limit, len(cuts), mark.Truncated)
	}
}

// lookup returns the value at a JSON pointer into v.
func lookup(v any, ptr string) any {
	for _, tok := range strings.Split(ptr, "/")[1:] {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			var i int
			fmt.Sscan(tok, &i)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
