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
	tb       string // terminal buckets by their earliest end
}

func newKeys(account string) keys {
	p := "callbus:{" + account + "}:"
	return keys{
		prefix:   p,
		lease:    p + "lease",
		seq:      p + "lease:seq",
		fence:    p + "fence",
		kinds:    p + "kinds",
		open:     p + "open",
		terminal: p + "terminal",
		cursor:   p + "cursor",
		outbox:   p + "outbox",
		tb:       p + "tb",
	}
}

// snap is the hash holding the snapshots of kind, or for the kinds keyed by call
// id, those whose id is not a bucketed one (and those written by releases before
// the buckets).
func (k keys) snap(kind string) string { return k.prefix + "snap:" + kind }

// bucket is the hash of kind's snapshots whose call ids fall in bucket b.
func (k keys) bucket(kind, b string) string { return k.prefix + "s:" + kind + ":" + b }

// buckets is the set of kind's bucket numbers (some may be empty).
func (k keys) buckets(kind string) string { return k.prefix + "sb:" + kind }

// terminalBucket is the hash of the terminal calls (field → ended ms) of bucket b.
func (k keys) terminalBucket(b string) string { return k.prefix + "t:" + b }

// bucketBits: a bucket holds the ids that agree but for their low 7 bits, 128 of
// them, Redis's default hash-max-listpack-entries, so a bucket stays a listpack
// (a few bytes per entry instead of some 70 in a hashtable) while its values stay
// within hash-max-listpack-value.
const bucketBits = 7

// bucketOf splits a call id into its bucket number and its field in the bucket;
// ok is false for an id that is not a non-negative integer in canonical form,
// which stays in the kind's single hash.
func bucketOf(id string) (bucket, field string, ok bool) {
	n, err := strconv.ParseUint(id, 10, 63)
	if err != nil || strconv.FormatUint(n, 10) != id {
		return "", "", false
	}
	return strconv.FormatUint(n>>bucketBits, 10), strconv.FormatUint(n&(1<<bucketBits-1), 10), true
}

// idOf is the call id of field in bucket, "" when either is malformed.
func idOf(bucket, field string) string {
	b, err1 := strconv.ParseUint(bucket, 10, 63)
	f, err2 := strconv.ParseUint(field, 10, 8)
	if err1 != nil || err2 != nil || f >= 1<<bucketBits {
		return ""
	}
	return strconv.FormatUint(b<<bucketBits|f, 10)
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
