package iparams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
)

// DecodeValues reads a values file: one JSON object mapping keys to values, as
// written by Values.WriteFile or by hand. Numbers are kept as json.Number. A key
// given twice is an error (JSON would silently keep the last).
func DecodeValues(data []byte) (map[string]any, error) {
	ms, err := members(data)
	if err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	out := make(map[string]any, len(ms))
	for _, m := range ms {
		if _, dup := out[m.Key]; dup {
			return nil, fmt.Errorf("decode values: %q is given twice", m.Key)
		}
		dec := json.NewDecoder(bytes.NewReader(m.Value))
		dec.UseNumber()
		var val any
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("decode value of %q: %w", m.Key, err)
		}
		out[m.Key] = val
	}
	return out, nil
}

// EncodeFile renders the values that differ from their defaults (so that a later
// change of a default applies) as a values file, in declaration order,
// secure values in plain text: the file must be kept private (WriteFile makes it
// 0600).
func (v *Values) EncodeFile() []byte {
	var b bytes.Buffer
	b.WriteString("{")
	n := 0
	for _, p := range v.d.params {
		var val any
		if s, ok := v.secure[p.Key]; ok {
			val = s.Reveal()
		} else if pv, ok := v.plain[p.Key]; ok && !reflect.DeepEqual(pv, p.Default) {
			val = pv
		} else {
			continue
		}
		k, _ := json.Marshal(p.Key)
		j, _ := json.Marshal(val) // strings, int64, bool, []string cannot fail
		if n > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  %s: %s", k, j)
		n++
	}
	if n > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// WriteFile writes EncodeFile to path with mode 0600, atomically: a temporary file
// in the same directory is synced and renamed over path, so a reader never sees a
// partial file.
func (v *Values) WriteFile(path string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".iparams-*.json")
	if err != nil {
		return fmt.Errorf("write values file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write values file: %w", err)
	}
	if _, err := f.Write(v.EncodeFile()); err != nil {
		f.Close()
		return fmt.Errorf("write values file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write values file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write values file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write values file: %w", err)
	}
	return nil
}
