package apijson

// Short strings repeat from record to record: units ("seconds", "USD"), types
// ("Agent", "Customer"), the names of agents, teams and queues, the account's own
// numbers. A page of 1,000 calls holds each of them hundreds of times; the
// decoder hands out one string per text instead of a new one per value, which
// spares most of the string allocations of a record.

const (
	// maxInternLen is the longest text shared: longer ones (URLs, notes) are
	// rarely repeated.
	maxInternLen = 40
	// maxInterned bounds the table: a decoder reading many distinct short
	// values (customers' numbers) starts over rather than grow.
	maxInterned = 1024
)

// str returns text as a string: a shared one for a short text seen before by
// this decoder, else a new one.
func (d *Decoder) str(text []byte) string {
	if len(text) > maxInternLen {
		return string(text)
	}
	if s, ok := d.strs[string(text)]; ok { // no conversion: the compiler looks up the bytes
		return s
	}
	if d.strs == nil {
		d.strs = make(map[string]string, 64)
	} else if len(d.strs) >= maxInterned {
		clear(d.strs)
	}
	s := string(text)
	d.strs[s] = s
	return s
}

// parseString is ParseString with the decoder's shared strings.
func (d *Decoder) parseString(raw []byte) (string, bool, error) {
	text, kind, err := scalar(raw)
	if err != nil || kind == KindNull {
		return "", false, err
	}
	return d.str(text), true, nil
}
