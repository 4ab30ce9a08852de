package diff

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/callbus/callbus/events"
)

// decodeLegacySnap decodes b into s when b is the JSON snapshot of an earlier
// release; legacy reports whether it was.
func decodeLegacySnap[S callSnap | metricSnap](b []byte, s *S) (legacy bool, err error) {
	if len(b) == 0 || b[0] != '{' {
		return false, nil
	}
	var js S // not s: encoding/json would move the caller's to the heap
	err = json.Unmarshal(b, &js)
	*s = js
	return true, err
}

// snapReader reads a binary snapshot b, past its version byte.
func snapReader(b []byte) (reader, error) {
	r := reader{b: b}
	if r.byte() != snapV1 {
		return r, fmt.Errorf("%w: unknown version", errSnapshot)
	}
	return r, nil
}

// head reads what both kinds of binary snapshot start with: the sequence and
// the updated time.
func (r *reader) head() (seq, upd int64) {
	seq = int64(r.uvarint())
	return seq, r.time(0)
}

// decodeCallSnap reads a call snapshot in either form (see snapcodec.go).
func decodeCallSnap(b []byte, s *callSnap) error { return decodeCallSnapIn(b, s, nil) }

// decodeCallSnapIn is decodeCallSnap reading the binary form into sc's maps
// (see scratch); sc may be nil.
func decodeCallSnapIn(b []byte, s *callSnap, sc *scratch) error {
	if legacy, err := decodeLegacySnap(b, s); legacy {
		return err
	}
	r, err := snapReader(b)
	if err != nil {
		return err
	}
	s.Seq, s.Upd = r.head()
	s.End = r.time(s.Upd)
	s.F = r.fieldsIn(sc)
	n := r.count(4)
	if r.err == nil && n > 0 {
		if sc != nil {
			s.P = sc.parts
		} else {
			s.P = make(map[string]partSnap, n)
		}
	}
	for range n {
		id := unzigzag(r.uvarint())
		p := partSnap{S: int(unzigzag(r.uvarint())), U: r.time(s.Upd), Gone: r.byte() == 1}
		if r.err != nil {
			break
		}
		s.P[strconv.FormatInt(id, 10)] = p
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = errSnapshot
	}
	return r.err
}

// callSnapEnd reads when the call ended (0: open) from a call snapshot in either
// form; of the binary form it reads the head only.
func callSnapEnd(b []byte) (int64, error) {
	if len(b) > 0 && b[0] == '{' {
		var s callSnap
		err := json.Unmarshal(b, &s)
		return s.End, err
	}
	r := reader{b: b}
	if r.byte() != snapV1 {
		return 0, fmt.Errorf("%w: unknown version", errSnapshot)
	}
	r.uvarint()
	upd := r.time(0)
	end := r.time(upd)
	return end, r.err
}

// encodeCallSnap gives the binary form of s, appended to buf. first, when not
// nil, are the fields of the call's first observation, stored in place of s.F
// (empty then; see appendNewFields). Participants keyed by something else than
// an integer (only a corrupt earlier snapshot could hold one) are dropped.
func encodeCallSnap(buf []byte, s *callSnap, first []field) []byte {
	b := binary.AppendUvarint(append(buf, snapV1), uint64(max(s.Seq, 0)))
	b = appendTime(b, s.Upd, 0)
	b = appendTime(b, s.End, s.Upd)
	if first != nil {
		b = appendNewFields(b, first, s.F)
	} else {
		b = appendFields(b, s.F)
	}
	type part struct {
		id int64
		p  partSnap
	}
	var few [8]part
	parts := few[:0]
	for k, p := range s.P {
		if id, err := strconv.ParseInt(k, 10, 64); err == nil {
			parts = append(parts, part{id, p})
		}
	}
	slices.SortFunc(parts, func(a, b part) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = binary.AppendUvarint(b, zigzag(p.id))
		b = binary.AppendUvarint(b, zigzag(int64(p.p.S)))
		b = appendTime(b, p.p.U, s.Upd)
		gone := byte(0)
		if p.p.Gone {
			gone = 1
		}
		b = append(b, gone)
	}
	return b
}

// decodeMetricSnap reads a metric snapshot in either form.
func decodeMetricSnap(b []byte, s *metricSnap) error { return decodeMetricSnapIn(b, s, nil) }

// decodeMetricSnapIn is decodeMetricSnap reading the binary form into sc's
// map (see scratch); sc may be nil.
func decodeMetricSnapIn(b []byte, s *metricSnap, sc *scratch) error {
	if legacy, err := decodeLegacySnap(b, s); legacy {
		return err
	}
	r, err := snapReader(b)
	if err != nil {
		return err
	}
	s.Seq, s.Upd = r.head()
	s.F = r.fieldsIn(sc)
	if r.err == nil && len(r.b) > 0 {
		r.err = errSnapshot
	}
	return r.err
}

// sameMetricSnap reports whether prev is, byte for byte, the snapshot a read of
// m with fields fs leaves when it changes nothing: the same sequence, updated
// time and fields. Most reads of a final metric are such; they are told without
// decoding prev.
func sameMetricSnap(prev []byte, m events.CallMetric, fs []field) bool {
	if len(prev) == 0 || prev[0] != snapV1 {
		return false
	}
	seq, n := binary.Uvarint(prev[1:])
	if n <= 0 || seq > math.MaxInt64 { // a sequence encodeMetricSnap would not write back
		return false
	}
	var buf [256]byte
	b := binary.AppendUvarint(append(buf[:0], snapV1), seq)
	b = appendTime(b, ms(m.UpdatedTime), 0)
	b, ok := appendFieldList(b, fs)
	return ok && bytes.Equal(b, prev)
}

// encodeMetricSnap gives the binary form of s; first as encodeCallSnap's.
func encodeMetricSnap(s *metricSnap, first []field) []byte {
	b := binary.AppendUvarint(append(make([]byte, 0, 64), snapV1), uint64(max(s.Seq, 0)))
	b = appendTime(b, s.Upd, 0)
	if first != nil {
		return appendNewFields(b, first, s.F)
	}
	return appendFields(b, s.F)
}

// SnapshotJSON renders a call or metric snapshot (kind "call" or "metric") in
// either form as the JSON earlier releases stored, which this release still
// reads: for looking into the binary form, and for upgrade tests.
func SnapshotJSON(kind string, snap []byte) ([]byte, error) {
	switch kind {
	case "call":
		var s callSnap
		if err := decodeCallSnap(snap, &s); err != nil {
			return nil, fmt.Errorf("call snapshot: %w", err)
		}
		return json.Marshal(s)
	case "metric":
		var s metricSnap
		if err := decodeMetricSnap(snap, &s); err != nil {
			return nil, fmt.Errorf("metric snapshot: %w", err)
		}
		return json.Marshal(s)
	}
	return nil, fmt.Errorf("snapshot JSON: kind %q is neither call nor metric", kind)
}
