package diff

import (
	"encoding/json"
	"fmt"
)

// ForgetCallFields returns call snapshot snap without the tracked fields
// named, when when (given the snapshot's tracked fields, canonical JSON by
// name; nil: always) says so, and whether anything was removed. A field
// missing from a snapshot is stored at the call's next observation without
// being announced (compare), so forgetting a field costs no event: it is how
// a new data policy re-baselines the state and how poller forget erases a
// person's values.
func ForgetCallFields(snap []byte, fields []string, when func(tracked map[string]string) bool) ([]byte, bool, error) {
	var s callSnap
	if err := decodeCallSnap(snap, &s); err != nil {
		return nil, false, fmt.Errorf("forget call fields: decode snapshot: %w", err)
	}
	if when != nil && !when(s.F) || !remove(s.F, fields) {
		return snap, false, nil
	}
	return encodeCallSnap(nil, &s, nil), true, nil
}

// ForgetUserFields is ForgetCallFields for a user snapshot (its fields always).
func ForgetUserFields(snap []byte, fields []string) ([]byte, bool, error) {
	var s userSnap
	if err := json.Unmarshal(snap, &s); err != nil {
		return nil, false, fmt.Errorf("forget user fields: decode snapshot: %w", err)
	}
	if !remove(s.F, fields) {
		return snap, false, nil
	}
	next, err := json.Marshal(s)
	if err != nil {
		return nil, false, fmt.Errorf("forget user fields: encode snapshot: %w", err)
	}
	return next, true, nil
}

// remove deletes the fields named from f and reports whether it held any.
func remove(f map[string]string, fields []string) bool {
	removed := false
	for _, name := range fields {
		if _, ok := f[name]; ok {
			delete(f, name)
			removed = true
		}
	}
	return removed
}
