package cursor

import (
	"fmt"
	"strconv"
	"strings"
)

// keys names the Redis keys of one account. All of them share the hash tag
// {account}, so they live in one Cluster slot.
type keys struct {
	prefix   string // callbus:{account}:
	lease    string
	seq      string
	fence    string
	kinds    string
	open     string
	terminal string
	cursor   string
	outbox   string
	// outboxMeta holds the outbox's last generated id and the term that wrote
	// it, and the count of events beyond one per entry (lua/commit.lua).
	outboxMeta string
	tb         string // terminal buckets by their earliest end
	acked      string // acknowledged outbox entries kept for a retention (outbox_retain.go)
	ackMarks   string // when each trim acknowledged up to which entry
	withdrew   string // outbox id -> times the relay withdrew the entry from the stream
	ops        string // what the leader last did: cycles, rollback check (ops.go)
	requests   string // operators' requests for the leader (ops.go)
	audit      string // operators' actions on the account, newest first (ops.go)
}

func newKeys(account string) keys {
	p := "callbus:{" + account + "}:"
	return keys{
		prefix:     p,
		lease:      p + "lease",
		seq:        p + "lease:seq",
		fence:      p + "fence",
		kinds:      p + "kinds",
		open:       p + "open",
		terminal:   p + "terminal",
		cursor:     p + "cursor",
		outbox:     p + "outbox",
		outboxMeta: p + "outbox:meta",
		tb:         p + "tb",
		acked:      p + "outbox:acked",
		ackMarks:   p + "outbox:acked:marks",
		withdrew:   p + "outbox:withdrawn",
		ops:        p + "ops",
		requests:   p + "ops:requests",
		audit:      p + "ops:audit",
	}
}

// snap is the hash holding the snapshots of kind, or for the kinds keyed by call
// id, those whose id is not a bucketed one (and those written by releases before
// the buckets).
func (k keys) snap(kind string) string { return k.prefix + "snap:" + kind }

// bucket is the hash of kind's snapshots whose call ids fall in bucket b.
func (k keys) bucket(kind, b string) string { return k.prefix + "s:" + kind + ":" + b }

// buckets is the set of kind's bucket numbers that hold a snapshot: the script
// that empties a bucket takes it out (lua/buckets.lua).
func (k keys) buckets(kind string) string { return k.prefix + "sb:" + kind }

// terminalBucket is the hash of the terminal calls (field → ended, see
// terminalEnd) of bucket b.
func (k keys) terminalBucket(b string) string { return k.prefix + "t:" + b }

// Buckets keep many calls in one small hash that Redis stores as a listpack, a
// few bytes per entry instead of some 70 in a hashtable: Redis keeps a hash a
// listpack up to hash-max-listpack-entries (default 128) fields of at most
// hash-max-listpack-value (default 64) bytes. A terminal bucket holds the ids
// that agree but for their low 7 bits (128 fields); a snapshot bucket those that
// agree but for their low 5 bits (32 ids), each snapshot cut into up to
// maxChunks fields of at most chunkSize bytes: the id's field, then "<field>.1"
// and so on (at most 128 fields). A longer snapshot lives in its kind's single
// hash.
const (
	terminalBucketBits = 7
	snapBucketBits     = 5
	maxChunks          = 4
	// chunkSize is the longest string a listpack stores with a one-byte header,
	// within hash-max-listpack-value.
	chunkSize = 63
)

// bucketOf splits a call id into its bucket number and its field in a bucket of
// 2^bits ids (an index of fieldArgs, and of chunkArgs for a snapshot bucket); ok
// is false for an id that is not a non-negative integer in canonical form, which
// stays out of buckets.
func bucketOf(id string, bits uint) (bucket uint64, field int, ok bool) {
	n, err := strconv.ParseUint(id, 10, 63)
	// In base 10 ParseUint takes digits only: canonical is without leading zeros.
	if err != nil || len(id) > 1 && id[0] == '0' {
		return 0, 0, false
	}
	return n >> bits, int(n & (1<<bits - 1)), true
}

// idOf is the call id of field in bucket of 2^bits ids, "" when either is
// malformed.
func idOf(bucket, field string, bits uint) string {
	b, err1 := strconv.ParseUint(bucket, 10, 63)
	f, err2 := strconv.ParseUint(field, 10, 8)
	if err1 != nil || err2 != nil || f >= 1<<bits {
		return ""
	}
	return strconv.FormatUint(b<<bits|f, 10)
}

// fieldArgs[f] is the field of id f of a bucket, and chunkArgs[f][n] that of
// chunk n of the snapshot at field f of a snapshot bucket (see chunkField).
// They are named once, as command arguments: a commit or a read of many
// snapshots would otherwise build and box a few names for each.
var (
	fieldArgs = func() (t [1 << terminalBucketBits]any) {
		for f := range t {
			t[f] = strconv.Itoa(f)
		}
		return t
	}()
	chunkArgs = func() (t [1 << snapBucketBits][maxChunks]any) {
		for f := range t {
			for n := range t[f] {
				t[f][n] = chunkField(strconv.Itoa(f), n)
			}
		}
		return t
	}()
)

// chunkField is the field of chunk n of a snapshot whose first chunk is field.
func chunkField(field string, n int) string {
	if n == 0 {
		return field
	}
	return field + "." + strconv.Itoa(n)
}

// checkAccount accepts account names that keep the hash tag intact: braces would
// move or end the tag, and whitespace has no business in a key.
func checkAccount(account string) error {
	if account == "" {
		return fmt.Errorf("%w: empty account", ErrInvalid)
	}
	if strings.ContainsAny(account, "{}") || strings.ContainsFunc(account, isSpaceOrControl) {
		return fmt.Errorf("%w: account %q: no braces, spaces or control characters", ErrInvalid, account)
	}
	return nil
}

// checkKind accepts snapshot kinds made of [A-Za-z0-9_.-], so that a kind can
// never reach into another key's name.
func checkKind(kind string) error {
	if kind == "" {
		return fmt.Errorf("%w: empty snapshot kind", ErrInvalid)
	}
	for _, r := range kind {
		ok := r == '_' || r == '.' || r == '-' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		if !ok {
			return fmt.Errorf("%w: snapshot kind %q: only letters, digits, '_', '.', '-'", ErrInvalid, kind)
		}
	}
	return nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }
