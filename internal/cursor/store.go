package cursor

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// RecommendedMaxEvents is the number of outbox entries per Commit callers
	// should stay under: a commit runs as one Lua script and Redis serves nobody
	// else meanwhile, so keep each one to a few milliseconds.
	RecommendedMaxEvents = 500

	// DefaultMaxBatchItems is the hard limit on the items of one Batch (snapshots
	// + deletes + open + terminal + cursors + events) unless WithMaxBatchItems
	// says otherwise. Larger batches get ErrBatchTooLarge, never a silent split:
	// splitting would break the atomicity the outbox exists for.
	DefaultMaxBatchItems = 5000

	// DefaultMaxBatchBytes is the hard limit on the bytes of one Batch
	// (Batch.Bytes) unless WithMaxBatchBytes says otherwise.
	// Redis refuses a command argument over proto-max-bulk-len (512 MB) and a
	// command over client-query-buffer-limit (1 GB) by closing the connection,
	// which a caller could not tell from a network failure and would retry for
	// ever; a larger batch gets ErrBatchTooLarge instead, before anything is sent.
	// The script itself has no other limit: its Lua unpacks at most one
	// command's arguments at a time (opArgsMax, commit_ops.go), and a batch's
	// items stay far below the arguments a command may have.
	DefaultMaxBatchBytes = 256 << 20
)

// DefaultPruneKinds are the snapshot kinds keyed by call id that Prune deletes
// with a pruned call unless WithPruneKinds says otherwise. Their snapshots are
// stored in buckets of 128 call ids (see the package comment).
var DefaultPruneKinds = []string{"call", "metric"}

// Store is the Redis state of one account. It is safe for concurrent use; it does
// not close the client it was given.
type Store struct {
	rdb        redis.UniversalClient
	account    string
	k          keys
	maxItems   int
	maxBytes   int
	pruneKinds []string
	// readHint is the size of the last raw outbox reads, in bytes: the next
	// read's buffer starts that large (see readXRange).
	readHint atomic.Int64
	// perEntry is how many events the last raw outbox read found per stream
	// entry (a batch entry holds a commit's): a read of n events asks for about
	// n / perEntry entries, not n entries of up to a commit's events each.
	perEntry atomic.Int64
	recent   *recent // nil: every outbox read goes to Redis (WithOutboxCache)
	// acknowledged entries are kept this long, and at most this many bytes
	// of them (WithAckRetention)
	ackRetention      time.Duration
	ackRetentionBytes int
	// sweepAt is where Prune's check of each bucket set goes on (SSCAN
	// cursors by kind, see sweepBuckets).
	sweepMu sync.Mutex
	sweepAt map[string]uint64
	// singleGone holds the bucketed kinds whose single hash the last read found
	// absent: the next reads ask only whether it came back (see getChunk).
	singleGone sync.Map // kind → struct{}
}

// Option tunes a Store.
type Option func(*Store) error

// WithMaxBatchItems sets the hard limit on the items of one Batch (n > 0).
func WithMaxBatchItems(n int) Option {
	return func(s *Store) error {
		if n <= 0 {
			return fmt.Errorf("%w: max batch items %d", ErrInvalid, n)
		}
		s.maxItems = n
		return nil
	}
}

// WithMaxBatchBytes sets the hard limit on the bytes of one Batch (n > 0).
func WithMaxBatchBytes(n int) Option {
	return func(s *Store) error {
		if n <= 0 {
			return fmt.Errorf("%w: max batch bytes %d", ErrInvalid, n)
		}
		s.maxBytes = n
		return nil
	}
}

// WithPruneKinds sets the snapshot kinds whose entry for a call id is deleted
// when Prune removes that call, and which are stored in buckets of call ids
// (default DefaultPruneKinds). Keep it the same across releases and replicas: a
// kind's buckets are only read while it is one of them.
func WithPruneKinds(kinds ...string) Option {
	return func(s *Store) error {
		for _, kind := range kinds {
			if err := checkKind(kind); err != nil {
				return err
			}
		}
		s.pruneKinds = append([]string(nil), kinds...)
		return nil
	}
}

// New returns the store of account on rdb (a single node, a Sentinel-managed
// primary or a Cluster). The account must not contain braces, spaces or control
// characters (ErrInvalid). New does no I/O.
func New(rdb redis.UniversalClient, account string, opts ...Option) (*Store, error) {
	if rdb == nil {
		return nil, fmt.Errorf("cursor: %w: nil redis client", ErrInvalid)
	}
	if err := checkAccount(account); err != nil {
		return nil, fmt.Errorf("cursor: %w", err)
	}
	s := &Store{
		rdb:               rdb,
		account:           account,
		k:                 newKeys(account),
		maxItems:          DefaultMaxBatchItems,
		maxBytes:          DefaultMaxBatchBytes,
		pruneKinds:        DefaultPruneKinds,
		ackRetention:      DefaultAckRetention,
		ackRetentionBytes: DefaultAckRetentionBytes,
	}
	// Until a read has seen the outbox, guess large: a guess too large costs
	// a few more XRANGEs of the first read; one too small, a reply of up to a
	// commit's events per event wanted.
	s.perEntry.Store(initialPerEntry)
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, fmt.Errorf("cursor: %w", err)
		}
	}
	return s, nil
}

// initialPerEntry is the events per outbox entry a store assumes before its
// first read (see Store.perEntry).
const initialPerEntry = 32

// Limits returns the hard limits of one Batch: its items and its bytes
// (WithMaxBatchItems, WithMaxBatchBytes); Commit refuses a batch over either.
func (s *Store) Limits() (items, bytes int) { return s.maxItems, s.maxBytes }

// Account returns the account the store was made for.
func (s *Store) Account() string { return s.account }

// KeyPrefix returns "callbus:{<account>}:", the prefix of every key of the store.
func (s *Store) KeyPrefix() string { return s.k.prefix }

// bucketed reports whether kind's snapshots are stored in buckets of call ids.
func (s *Store) bucketed(kind string) bool { return slices.Contains(s.pruneKinds, kind) }
