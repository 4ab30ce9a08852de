package cursor

import "encoding/json"

// decodeHeaders reads an outbox entry's headers as releases before the batch entries stored them:
// a JSON object of strings ("" and "{}" for none: nil). The relay reads every
// entry's headers, so the common form, what json.Marshal writes for a map of
// printable ASCII strings (the trace context), is read here in one pass; any
// other form (escapes, spaces, other bytes, not an object of strings) goes to
// encoding/json, which decides as it always did.
func decodeHeaders(b []byte) (map[string]string, error) {
	if len(b) == 0 || string(b) == "{}" {
		return nil, nil
	}
	if h, ok := plainHeaders(b); ok {
		return h, nil
	}
	var h map[string]string
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, err
	}
	return h, nil
}

// plainHeaders reads b when it is {"k":"v",...} with at least one pair, no
// whitespace, and keys and values of printable ASCII without '"' or '\\'; false
// for anything else.
func plainHeaders(b []byte) (map[string]string, bool) {
	if len(b) < len(`{"":""}`) || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	pairs := 1
	for _, c := range b {
		if c == ',' {
			pairs++
		}
	}
	h := make(map[string]string, pairs)
	rest := b[1:]
	for {
		k, after, ok := plainString(rest)
		if !ok || len(after) == 0 || after[0] != ':' {
			return nil, false
		}
		v, after, ok := plainString(after[1:])
		if !ok || len(after) == 0 {
			return nil, false
		}
		h[headerKey(k)] = string(v)
		switch after[0] {
		case ',':
			rest = after[1:]
		case '}':
			return h, len(after) == 1
		default:
			return nil, false
		}
	}
}

// plainString reads a JSON string of printable ASCII without escapes at the start
// of b and returns its contents and what follows it.
func plainString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[1:i], b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// headerKey is k as a string; the trace context's keys, which nearly every entry
// has, without a copy.
func headerKey(k []byte) string {
	switch string(k) {
	case "traceparent":
		return "traceparent"
	case "tracestate":
		return "tracestate"
	}
	return string(k)
}
