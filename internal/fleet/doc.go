// Package fleet shares accounts among the replicas of a fleet: it keeps each
// replica's membership in Redis and gives every account to one live member by
// rendezvous hashing, so that an account moves only when its owner joins or
// leaves. With the lease holders (WithHolders, as the service runs it) the
// assignment is balanced and sticky instead (Assign): shares differ by one at
// most, an account stays where it is led while its holder is within its share,
// and a membership change moves only what it must. It also uses the members'
// ages and when each account arrived at its holder, so that a rolling update
// moves each account as few times as keeping every step balanced allows: the
// old members (a rollout replaces them next) keep the smaller shares, a member
// over its share gives up the accounts it took last, and the accounts given out
// go to the youngest members. A rolling update of 3 replicas with a surge of one
// over 20 accounts moves each account at most twice, at most 30 moves in all,
// whichever order the old replicas leave in, also when a new one joins before the
// old one it replaces has left (TestAssignMovesOnlyWhatTheChangeNeeds; it was 3
// times before, and 4 on a real cluster). Replicas of an older version, which
// know neither ages nor arrivals, assign otherwise: while both versions run, an
// account may be wanted by neither until the older replicas are gone. It decides
// who tries to lead an account; the per-account lease of package cursor (with
// its fencing token) stays the guarantee of one writer.
//
// # Membership
//
// One sorted set, callbus:fleet:{<name>}:members, holds the members scored by
// their expiry in milliseconds of Redis's own clock: a Lua script reads TIME, so
// the replicas' clocks never matter. Beside it, under the same hash tag (one
// Redis Cluster slot), the hash callbus:fleet:{<name>}:joined holds when each
// member joined (set again after it expired), and callbus:fleet:{<name>}:arrived
// holds, for each account, "replica|ms": when that replica took it (recorded by
// a forced heartbeat at the first check that reads it holding the account's
// lease). A member that
// leaves or expires takes its entries in both. A replica renews its membership
// every TTL/3 and reads the live members, their joined times and the arrivals at
// every check (WithCheckInterval, default 1 s). Keep the member TTL at most the lease
// TTL: a dead replica then leaves the fleet, and its accounts get new owners,
// within the lease TTL, and their leadership takes the lease when it expires. At
// 2/3 of the lease TTL or less (see WithTTL), the new owner waits for the lease
// before it expires, and takes it at once.
//
// # Hand-off
//
// When an account moves (a member joined or left), disappears from the accounts,
// or its settings change (its Digest), the context of its work is cancelled; the
// work stops polling, drains its outbox and releases its lease, then returns. A
// replica that stops (Run's ctx ends) cancels all its works, waits for them, and
// only then removes its membership, so the new owners start when the leases are
// free. An account that leaves the source may still hold events in its outbox
// (NATS away during its hand-off): the service lists such accounts to Run too,
// under a Digest of their own, and their work drains the outbox instead of
// polling (internal/service, retired.go).
//
// While Redis is unreachable a replica keeps the accounts it runs (their leases
// fence their writes) and logs; nothing here crashes or stops for it.
//
// # API
//
//	type Account struct{ Name, Digest string }
//	func New(rdb redis.UniversalClient, replica string, log zerolog.Logger, opts ...Option) (*Fleet, error)
//	func WithTTL(time.Duration) Option           // member TTL, default 10 s
//	func WithName(string) Option                 // the fleet's name (its Redis key), default "callbus"
//	func WithCheckInterval(time.Duration) Option // default 1 s
//	func WithHolders(Holders) Option             // balanced, sticky: Assign
//	type Member struct{ Name string; Joined int64 }
//	func Assign(accounts []string, members []Member, held map[string]string, arrived map[string]int64) map[string]string
//	func (f *Fleet) Run(ctx context.Context, accounts func() []Account, work func(ctx context.Context, account string) error) error
//	func (f *Fleet) Members() []string // live members, sorted
//	func (f *Fleet) Owned() []string   // accounts this replica runs, sorted
//	func Owner(account string, members []string) string
//
// The accounts of a fleet come from a directory of account files (the
// accounts_dir setting), re-read every few seconds by content:
//
//	func WatchDir(ctx context.Context, dir string, base map[string]any, log zerolog.Logger, opts ...DirOption) (*Dir, error)
//	func WithRescan(time.Duration) DirOption                 // default 2 s
//	func (d *Dir) Accounts() []Account                       // the good files' accounts: Run's accounts
//	func (d *Dir) Settings(account string) (config.Settings, bool)
//	func (d *Dir) Lookup(account string) (config.AccountFile, bool) // settings with their Digest
//	func (d *Dir) Problems() []Problem                       // {File, Key, Message} of each refused file
//
// base is config.ProcessValues; each file is read by config.ReadAccountFile.
package fleet
