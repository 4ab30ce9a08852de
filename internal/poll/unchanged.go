package poll

import (
	"hash/maphash"
	"time"

	"github.com/callbus/callbus/events"
)

// unchanged remembers, per kind and id, the last record diffed (its
// fingerprint) and the snapshot the diff left (its hash). When the next read
// lists the same record and Redis holds that same snapshot, the diff would find
// nothing: it is skipped. Users and teams are read whole every cycle and change
// rarely, and decoding each one's snapshot to compare and encode it again was a
// tenth of a fleet replica's CPU. Redis stays the truth: a snapshot written by
// anyone else (a rebuild, a forgotten person, a failed commit) hashes
// differently, and the record is diffed. Only Run's goroutine uses it.
type unchanged struct {
	seed  maphash.Seed
	kinds map[string]map[string]diffed
}

// diffed is what an id's last diff saw and left.
type diffed struct{ record, snap uint64 }

// same reports whether kind's id, listed as record, meets the snapshot its last
// diff left (snap: the snapshot Redis holds now).
func (m *unchanged) same(kind, id string, record uint64, snap []byte) bool {
	d, ok := m.kinds[kind][id]
	return ok && snap != nil && d.record == record && d.snap == maphash.Bytes(m.seed, snap)
}

// next returns the next cycle's memory of one kind: the ids seen this cycle
// only (a record gone is forgotten).
func (m *unchanged) next(kind string, n int) map[string]diffed {
	if m.kinds == nil {
		m.seed, m.kinds = maphash.MakeSeed(), map[string]map[string]diffed{}
	}
	return make(map[string]diffed, n)
}

// keep records id's diff into next: the record and the snapshot it left.
func (m *unchanged) keep(next map[string]diffed, id string, record uint64, snap []byte) {
	next[id] = diffed{record: record, snap: maphash.Bytes(m.seed, snap)}
}

// fingerprintUser hashes every field of u the API listed (not Raw, which with
// callcenter.WithoutRaw is nil): a user differing in any of them is diffed.
func fingerprintUser(seed maphash.Seed, u *events.User) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	writeInt(&h, u.ID)
	writeStrings(&h, u.Name, u.Email, u.Phone, u.TimeZone, u.Role)
	writeInt(&h, int64(u.Status))
	writeInt(&h, int64(u.Preference))
	writeInt(&h, int64(u.MobileAppPreference))
	writeTime(&h, u.LastCallTime)
	writeTime(&h, u.LastSeenTime)
	writeBools(&h, u.Confirmed, u.Deleted, u.Language != nil)
	if u.Language != nil {
		writeStrings(&h, *u.Language)
	}
	writeInt(&h, int64(len(u.Teams)))
	for _, t := range u.Teams {
		writeInt(&h, t.ID)
	}
	return h.Sum64()
}

// fingerprintTeam hashes every field of t the API listed (not Raw).
func fingerprintTeam(seed maphash.Seed, t *events.Team) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	writeInt(&h, t.ID)
	writeStrings(&h, t.Name, t.Description)
	writeBools(&h, t.OmniChannel)
	writeInt(&h, int64(len(t.Users)))
	for _, u := range t.Users {
		writeInt(&h, u.ID)
	}
	return h.Sum64()
}

func writeInt(h *maphash.Hash, n int64) {
	var b [8]byte
	for i := range b {
		b[i] = byte(n >> (8 * i))
	}
	_, _ = h.Write(b[:])
}

// writeStrings writes each string with its length, so that "ab","c" and
// "a","bc" differ.
func writeStrings(h *maphash.Hash, ss ...string) {
	for _, s := range ss {
		writeInt(h, int64(len(s)))
		_, _ = h.WriteString(s)
	}
}

func writeBools(h *maphash.Hash, bs ...bool) {
	for _, b := range bs {
		if b {
			_ = h.WriteByte(1)
		} else {
			_ = h.WriteByte(0)
		}
	}
}

// writeTime writes nil apart from every time, and a time as its instant and
// zone offset (the snapshot's text keeps both).
func writeTime(h *maphash.Hash, t *time.Time) {
	if t == nil {
		_ = h.WriteByte(0)
		return
	}
	_ = h.WriteByte(1)
	_, off := t.Zone()
	writeInt(h, t.UnixNano())
	writeInt(h, int64(off))
}
