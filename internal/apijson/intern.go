package apijson

import "hash/maphash"

// Short strings repeat from record to record: units ("seconds", "USD"), types
// ("Agent", "Customer"), the names of agents, teams and queues, the account's own
// numbers. A page of 1,000 calls holds each of them hundreds of times; the
// decoder hands out one string per text instead of a new one per value, which
// spares most of the string allocations of a record.

const (
	// maxInternLen is the longest text shared: longer ones (URLs, notes) are
	// rarely repeated.
	maxInternLen = 40
	// internSets is the size of the table of shared strings: a text's set of
	// two is chosen by a hash of it, and a text not found there takes the
	// first place of the set, the text there moving to the second. A table
	// looked up by one hash and two comparisons costs half of what a map did (a
	// map's lookup was 5% of a page's decoding) and cannot grow; two places per
	// set keep two frequent texts of one set from evicting each other at every
	// turn (with one place, some processes' hash seeds cost a page of 100 calls
	// 200 more allocations).
	internSets = 512
)

var internSeed = maphash.MakeSeed()

// str returns text as a string: a shared one for a short text seen before by
// this decoder, else a new one.
func (d *Decoder) str(text []byte) string {
	if len(text) > maxInternLen {
		return string(text)
	}
	if len(text) == 0 {
		return ""
	}
	if d.strs == nil {
		d.strs = new([internSets][2]string)
	}
	set := &d.strs[maphash.Bytes(internSeed, text)%internSets]
	// No conversion: the compiler compares the bytes.
	if set[0] == string(text) {
		return set[0]
	}
	if set[1] == string(text) {
		return set[1]
	}
	s := string(text)
	set[0], set[1] = s, set[0]
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

// stringValue reads the next value as ParseString reads it, with the decoder's
// shared strings; a plain string (the usual) is not scanned a second time.
func (d *Decoder) stringValue() (string, bool, error) {
	raw, err := d.Value()
	if err != nil {
		return "", false, err
	}
	if d.fast && d.fs.plainAt >= 0 { // set by this Value
		return d.str(raw[1 : len(raw)-1]), true, nil
	}
	return d.parseString(raw)
}
