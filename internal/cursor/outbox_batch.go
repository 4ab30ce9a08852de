package cursor

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
)

// A commit appends its events to the outbox as ONE stream entry, a batch entry
// of two fields: "n", how many events it holds, and "events", all of them in the
// compact form below. Redis then does one XADD per commit instead of one per
// event (and the trim one per batch into the acknowledged entries), and keeps
// one entry's overhead instead of six fields per event.
//
// Every event still has a stream id of its own, so that everything that names an
// outbox entry (CommitResult.StreamIDs, the relay's Callbus-Outbox-Id, trims,
// withdrawals, heals) names one event, as before: the commit script reserves n
// consecutive ids <ms>-<seq-n+1> .. <ms>-<seq> and appends the entry under the
// last of them, so that no other entry can ever take the others. Event i (from
// 0) of a batch entry <ms>-<seq> is <ms>-<seq-n+1+i>. Readers expand an entry
// into its events and leave out those at or before the id they read after: an
// XRANGE from "(<id>" returns the entry holding <id> whenever one of its events
// comes after it. A trim moves whole entries: the one holding the trim's id stays
// in the outbox, and readers skip its acknowledged events, until a later trim
// reaches its last event.
//
// Entries of one event per entry (fields id, subject, data, headers, type, time)
// that releases before the batch entries appended are read as they always were.
const (
	batchCountField  = "n"
	batchEventsField = "events"
	// batchFormat is the first byte of the events field: the layout below;
	// batchS2 is that layout compressed (an S2 block,
	// github.com/klauspost/compress/s2), batchZstd compressed as the releases
	// of November 2026 did (a zstd frame), still read. Any other value is an
	// error, not a guess: a newer release's format.
	batchFormat = 1
	batchS2     = 2
	batchZstd   = 3
	// batchCompressFrom is the smallest layout compressed: an event's JSON
	// repeats its names and so do a commit's events, most of the bytes Redis
	// keeps in the outbox and, for the retention, in acked.
	batchCompressFrom = 512
)

// S2 rather than zstd: on the backlog benchmark's commits (some 650 KB laid out)
// S2 encodes 2.7 times faster than zstd's fastest level (294 against 806 µs per
// commit, 28 November 2026), zstd's encoder having been about a tenth of the
// poller's CPU on a backlog; zstd keeps 6% of the layout where S2 keeps 10.5%
// (about 140 bytes per event against 80). Those bytes are what the retention of
// acknowledged entries keeps, and it is bounded in bytes
// (DefaultAckRetentionBytes), so S2 costs events covered under a sustained high
// rate, not Redis memory. The zstd decoder stays for the entries of those
// releases (an outbox or a retention written before an upgrade).
var batchDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderLowmem(true), zstd.WithDecoderConcurrency(1))
})

// The events field: batchFormat, then per event, each string as a uvarint length
// and its bytes: id, subject, type, time (RFC 3339 with nanoseconds, "" when
// unknown), the number of headers (uvarint) and each header's name and value
// (names sorted), data.

// encodeBatch returns the events field of evs: their layout, compressed when
// at least batchCompressFrom bytes long.
// The layout and the compressor's output go through one pair of buffers kept for
// the next commit (a backlog's commit is some 500 events, half a megabyte laid
// out): only the compressed field, a fraction of it, is allocated per commit.
// Commits take turns for them; a sync.Pool kept several pairs, some 5 MB of a
// backlog's live heap, which the collector let the heap grow by as much again.
func encodeBatch(evs []event.Message) ([]byte, error) {
	batchBufs.Lock()
	defer batchBufs.Unlock()
	defer batchBufs.shrink()
	raw, err := layoutBatch(batchBufs.raw[:0], evs)
	batchBufs.raw = raw
	if err != nil {
		return nil, err
	}
	if len(raw) < batchCompressFrom {
		return slices.Clone(raw), nil
	}
	bound := s2.MaxEncodedLen(len(raw) - 1)
	if bound < 0 { // over 4 GB: far past any commit's byte limit
		return nil, fmt.Errorf("%w: outbox batch of %d bytes is too large to compress", ErrInvalid, len(raw))
	}
	need := 1 + bound
	if cap(batchBufs.out) < need {
		batchBufs.out = make([]byte, need)
	}
	out := batchBufs.out[:need]
	out[0] = batchS2
	n := len(s2.Encode(out[1:], raw[1:]))
	return slices.Clone(out[:1+n]), nil
}

// batchBuffers are encodeBatch's buffers.
type batchBuffers struct {
	sync.Mutex
	raw, out []byte
}

var batchBufs batchBuffers

// maxKeptBatchBuf is the largest buffer encodeBatch keeps: a rare commit much
// larger than a backlog's (up to the store's byte limit) leaves its buffers to
// the collector.
const maxKeptBatchBuf = 2 << 20

// shrink drops a buffer grown past maxKeptBatchBuf; the lock is held.
func (b *batchBuffers) shrink() {
	if cap(b.raw) > maxKeptBatchBuf {
		b.raw = nil
	}
	if cap(b.out) > maxKeptBatchBuf {
		b.out = nil
	}
}

// layoutBatch appends the layout of events to dst.
func layoutBatch(dst []byte, evs []event.Message) ([]byte, error) {
	dst = append(dst, batchFormat)
	var names []string
	for _, e := range evs {
		if e.ID == "" || e.Subject == "" {
			return nil, fmt.Errorf("%w: outbox entry without id or subject", ErrInvalid)
		}
		dst = appendString(dst, e.ID)
		dst = appendString(dst, e.Subject)
		dst = appendString(dst, string(e.Type))
		if e.Time.IsZero() {
			dst = append(dst, 0)
		} else {
			// Room for the length's byte, then the time written in place.
			at := len(dst)
			dst = e.Time.AppendFormat(append(dst, 0), time.RFC3339Nano)
			dst[at] = byte(len(dst) - at - 1) // at most 35 bytes: one uvarint byte
		}
		names = names[:0]
		for k := range e.Headers {
			names = append(names, k)
		}
		slices.Sort(names)
		dst = binary.AppendUvarint(dst, uint64(len(names)))
		for _, k := range names {
			dst = appendString(dst, k)
			dst = appendString(dst, e.Headers[k])
		}
		dst = binary.AppendUvarint(dst, uint64(len(e.Data)))
		dst = append(dst, e.Data...)
	}
	return dst, nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// batchIDs returns the stream ids of the n events of the batch entry entryID.
func batchIDs(entryID string, n int) ([]string, error) {
	last, err := parseStreamID(entryID)
	if err != nil {
		return nil, err
	}
	if n < 1 || uint64(n-1) > last.seq {
		return nil, fmt.Errorf("batch entry %s cannot hold %d events", entryID, n)
	}
	// One string holds them all, each id a slice of it: three allocations
	// rather than two per id.
	prefix := strconv.FormatUint(last.ms, 10) + "-"
	first := last.seq - uint64(n-1)
	var digits [20]byte
	var all strings.Builder
	all.Grow(n * (len(prefix) + len(strconv.AppendUint(digits[:0], last.seq, 10))))
	for i := range uint64(n) {
		all.WriteString(prefix)
		all.Write(strconv.AppendUint(digits[:0], first+i, 10))
	}
	rest := all.String()
	ids := make([]string, n)
	for i := range ids {
		size := len(prefix) + len(strconv.AppendUint(digits[:0], first+uint64(i), 10))
		ids[i], rest = rest[:size], rest[size:]
	}
	return ids, nil
}

// decodeBatch appends to recs the events of the batch entry entryID, each with
// its own stream id; n is the
// entry's "n" field, b its "events" field. The records' Data share b (or its
// decompressed copy); the
// subjects and types go through intern.
func decodeBatch(recs []event.Committed, entryID string, n string, b []byte, intern func([]byte) string) ([]event.Committed, error) {
	count, err := strconv.Atoi(n)
	if err != nil {
		return nil, fmt.Errorf("outbox entry %s: event count %q", entryID, n)
	}
	last, err := parseStreamID(entryID)
	if err != nil {
		return nil, fmt.Errorf("outbox entry: %w", err)
	}
	if count < 1 || uint64(count-1) > last.seq {
		return nil, fmt.Errorf("outbox entry %s: cannot hold %d events", entryID, count)
	}
	if len(b) == 0 || (b[0] != batchFormat && b[0] != batchS2 && b[0] != batchZstd) {
		return nil, fmt.Errorf("outbox entry %s: unknown events format", entryID)
	}
	rd := batchReader{b: b[1:]}
	switch b[0] {
	case batchS2:
		rd.b, err = s2.Decode(nil, b[1:])
	case batchZstd:
		var dec *zstd.Decoder
		if dec, err = batchDecoder(); err == nil {
			rd.b, err = dec.DecodeAll(b[1:], nil)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("outbox entry %s: events: %w", entryID, err)
	}
	committed := last.time()
	for i := range count {
		id := streamID{ms: last.ms, seq: last.seq - uint64(count-1-i)}
		m, err := rd.message(intern)
		if err != nil {
			return nil, fmt.Errorf("outbox entry %s: event %d of %d: %w", entryID, i+1, count, err)
		}
		recs = append(recs, event.Committed{StreamID: id.String(), CommittedAt: committed, Message: m})
	}
	if len(rd.b) != 0 {
		return nil, fmt.Errorf("outbox entry %s: %d bytes after %d events", entryID, len(rd.b), count)
	}
	return recs, nil
}

// batchReader reads an events field's values off the front of b.
type batchReader struct{ b []byte }

func (r *batchReader) bytes() ([]byte, error) {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		return nil, fmt.Errorf("truncated")
	}
	v := r.b[k : k+int(n) : k+int(n)]
	r.b = r.b[k+int(n):]
	return v, nil
}

func (r *batchReader) message(intern func([]byte) string) (event.Message, error) {
	var m event.Message
	var v [4][]byte
	for j := range v {
		var err error
		if v[j], err = r.bytes(); err != nil {
			return m, err
		}
	}
	m.ID, m.Subject, m.Type = string(v[0]), intern(v[1]), events.Type(intern(v[2]))
	if m.ID == "" || m.Subject == "" {
		return m, fmt.Errorf("missing id or subject")
	}
	if len(v[3]) > 0 {
		var err error
		if m.Time, err = time.Parse(time.RFC3339Nano, string(v[3])); err != nil {
			return m, fmt.Errorf("time: %w", err)
		}
	}
	nh, k := binary.Uvarint(r.b)
	if k <= 0 || nh > uint64(len(r.b)) {
		return m, fmt.Errorf("truncated")
	}
	r.b = r.b[k:]
	if nh > 0 {
		m.Headers = make(map[string]string, nh)
		for range nh {
			name, err := r.bytes()
			if err != nil {
				return m, err
			}
			val, err := r.bytes()
			if err != nil {
				return m, err
			}
			m.Headers[headerKey(name)] = string(val)
		}
	}
	var err error
	m.Data, err = r.bytes()
	return m, err
}
