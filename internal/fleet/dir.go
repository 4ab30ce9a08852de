package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/rs/zerolog"
)

// DefaultRescan is how often a Dir re-reads its directory by default.
const DefaultRescan = 2 * time.Second

// Dir is the accounts of an accounts directory (the accounts_dir setting), kept
// current in the background: every <account>.json file is read through
// config.ReadAccountFile, laid over the process's values. Files are found by
// reading the directory again every few seconds and compared by content, so a
// file that appears, changes, disappears or turns bad is picked up without a
// restart, and so are Kubernetes ConfigMap and Secret mounts (which swap a
// "..data" symlink: files are read through symlinks, dot-files ignored). A file
// that is refused is not an account (an account whose file turns bad stops
// polling; the service drains its outbox) and is listed by Problems; it never affects the other files. Dir's methods are safe
// for concurrent use.
type Dir struct {
	dir    string
	base   map[string]any
	log    zerolog.Logger
	rescan time.Duration

	// Only the scanning goroutine (WatchDir's, then watch's) uses these.
	stats map[string]fileStat // the directory's files at the last read, by name
	scans int                 // scans so far

	mu      sync.Mutex
	files   map[string]fileState // by file name
	scanErr error                // the last failure to list the directory
}

// fileStat is what a scan compares a file by before reading it: its size,
// modification time and mode, through symlinks (a Kubernetes "..data" swap
// points a name at a new file).
type fileStat struct {
	size, mod int64
	mode      os.FileMode
	err       bool // the stat failed
}

// fullReadEvery is every how many scans the files are read even though none
// looks changed: a rewrite of the same size within the file system's timestamp
// granularity would otherwise go unseen (here, for at most that many scans).
const fullReadEvery = 15

// fileState is the outcome of one file's last read.
type fileState struct {
	account config.AccountFile
	err     error // *config.AccountFileError, or nil
}

// Problem is one reason an account file is refused.
type Problem struct {
	File    string // the file's name in the directory, e.g. acme.json
	Key     string // the setting at fault; "" for the file as a whole (e.g. malformed JSON)
	Message string // never holds a secure value
}

func (p Problem) String() string {
	if p.Key == "" {
		return p.File + ": " + p.Message
	}
	return p.File + ": " + p.Key + ": " + p.Message
}

// DirOption sets an optional parameter of WatchDir.
type DirOption func(*Dir)

// WithRescan sets how often the directory is read again (default DefaultRescan).
func WithRescan(d time.Duration) DirOption { return func(w *Dir) { w.rescan = d } }

// WatchDir reads the account files of dir once, then again every rescan period
// until ctx ends. base holds the process's own values (config.ProcessValues). It
// fails only when dir cannot be listed at first; later failures keep the
// accounts last read and are logged.
func WatchDir(ctx context.Context, dir string, base map[string]any, log zerolog.Logger, opts ...DirOption) (*Dir, error) {
	w := &Dir{dir: dir, base: maps.Clone(base), log: log, rescan: DefaultRescan, files: map[string]fileState{}}
	for _, o := range opts {
		o(w)
	}
	if w.rescan <= 0 {
		return nil, fmt.Errorf("accounts directory: rescan period %s: want > 0", w.rescan)
	}
	if err := w.scan(); err != nil {
		return nil, err
	}
	go w.watch(ctx)
	return w, nil
}

func (w *Dir) watch(ctx context.Context) {
	t := time.NewTicker(w.rescan)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := w.scan()
		w.mu.Lock()
		was := w.scanErr
		w.scanErr = err
		w.mu.Unlock()
		switch {
		case err != nil && was == nil:
			w.log.Error().Err(err).Msg("accounts directory: cannot read it; the accounts last read stay")
		case err == nil && was != nil:
			w.log.Info().Str("dir", w.dir).Msg("accounts directory: readable again")
		}
	}
}

// scan reads every account file of the directory and logs what changed. It
// reads them only when a file of the directory (account or key file) looks
// changed, or every fullReadEvery scans: reading and validating thousands of
// files every 2 seconds was a tenth of a fleet replica's CPU, a stat of each
// costs little.
func (w *Dir) scan() error {
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("accounts directory: %w", err)
	}
	stats := statFiles(w.dir, entries)
	w.scans++
	if w.stats != nil && maps.Equal(stats, w.stats) && w.scans%fullReadEvery != 0 {
		return nil
	}
	w.stats = stats
	next := make(map[string]fileState, len(entries))
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue // Kubernetes' ..data and timestamped directories, editors' files, key files
		}
		if fi, err := os.Stat(filepath.Join(w.dir, name)); err == nil && fi.IsDir() {
			continue
		}
		a, err := config.ReadAccountFile(w.dir, name, w.base)
		next[name] = fileState{account: a, err: err}
	}
	w.mu.Lock()
	prev := w.files
	w.files = next
	w.mu.Unlock()
	w.logChanges(prev, next)
	return nil
}

// statFiles stats every file of the directory but dot-files, through symlinks.
func statFiles(dir string, entries []os.DirEntry) map[string]fileStat {
	out := make(map[string]fileStat, len(entries))
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			out[name] = fileStat{err: true}
			continue
		}
		out[name] = fileStat{size: fi.Size(), mod: fi.ModTime().UnixNano(), mode: fi.Mode()}
	}
	return out
}

// logChanges logs every file whose outcome changed: accounts added, changed and
// removed, files refused (loudly) and accepted again.
func (w *Dir) logChanges(prev, next map[string]fileState) {
	for name, n := range next {
		p, had := prev[name]
		switch {
		case n.err != nil && (!had || p.err == nil || p.err.Error() != n.err.Error()):
			ev := w.log.Error().Str("file", name).Err(n.err)
			if had && p.err == nil {
				ev.Str("account", p.account.Name).Msg("accounts directory: account file refused; the account stops")
			} else {
				ev.Msg("accounts directory: account file refused")
			}
		case n.err != nil:
		case !had || p.err != nil:
			w.log.Info().Str("file", name).Str("account", n.account.Name).Str("digest", n.account.Digest).Msg("accounts directory: account added")
		case p.account.Digest != n.account.Digest:
			w.log.Info().Str("file", name).Str("account", n.account.Name).Str("digest", n.account.Digest).Msg("accounts directory: account settings changed")
		}
	}
	for name, p := range prev {
		if _, ok := next[name]; !ok {
			w.log.Info().Str("file", name).Str("account", p.account.Name).Msg("accounts directory: account file removed")
		}
	}
}

// Accounts returns the accounts of the good files, sorted by name: the accounts
// function of Fleet.Run.
func (w *Dir) Accounts() []Account {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Account
	for _, f := range w.files {
		if f.err == nil {
			out = append(out, Account{Name: f.account.Name, Digest: f.account.Digest})
		}
	}
	slices.SortFunc(out, func(a, b Account) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Settings returns the settings of account as last read, and whether its file is
// there and good.
func (w *Dir) Settings(account string) (config.Settings, bool) {
	a, ok := w.Lookup(account)
	return a.Settings, ok
}

// Lookup is Settings with the account's Digest: a work started for one Digest can
// tell whether the settings it reads are those (Run restarts it otherwise).
func (w *Dir) Lookup(account string) (config.AccountFile, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, ok := w.files[account+".json"]
	if !ok || f.err != nil {
		return config.AccountFile{}, false
	}
	return f.account, true
}

// Problems returns why each refused file is refused, sorted by file, one entry a
// key; empty when every file is good.
func (w *Dir) Problems() []Problem {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Problem
	for _, name := range slices.Sorted(maps.Keys(w.files)) {
		var afe *config.AccountFileError
		if !errors.As(w.files[name].err, &afe) {
			continue
		}
		for _, p := range afe.Problems {
			msg := p.Message
			if p.Attr != "" {
				msg = p.Attr + ": " + msg
			}
			out = append(out, Problem{File: name, Key: p.Key, Message: msg})
		}
	}
	return out
}
