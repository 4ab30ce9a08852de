package fleet

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/rs/zerolog"
)

const (
	goodFile = `{"api_url": "http://sim:8080/a/%s", "api_key_file": "%s.key"}`
	rescan   = 20 * time.Millisecond
)

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeAccount writes a good account file and its key file into dir.
func writeAccount(t testing.TB, dir, name string) {
	t.Helper()
	write(t, filepath.Join(dir, name+".key"), "key-of-"+name+"\n")
	write(t, filepath.Join(dir, name+".json"), fmt.Sprintf(goodFile, name, name))
}

func watch(t *testing.T, dir string) (*Dir, *simtest.Buffer) {
	t.Helper()
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := WatchDir(ctx, dir, map[string]any{"rate_limit_share": "50"}, zerolog.New(log), WithRescan(rescan))
	if err != nil {
		t.Fatal(err)
	}
	return d, log
}

func names(as []Account) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return out
}

func problemKeys(d *Dir, file string) []string {
	var keys []string
	for _, p := range d.Problems() {
		if p.File == file {
			keys = append(keys, p.Key)
		}
	}
	return keys
}

// Each bad file is refused alone, with its file and key; the good ones are
// accounts with the process's values under theirs.
func TestDirReadsGoodAndBadFiles(t *testing.T) {
	dir := t.TempDir()
	writeAccount(t, dir, "acme")
	writeAccount(t, dir, "beta")
	bad := map[string]struct{ content, key string }{
		"malformed.json":  {`{"api_url": `, ""},
		"unknown.json":    {`{"api_url": "http://sim:8080", "api_key_file": "acme.key", "colour": "blue"}`, "colour"},
		"wrongtype.json":  {`{"api_url": "http://sim:8080", "api_key_file": "acme.key", "calls_interval_seconds": "often"}`, "calls_interval_seconds"},
		"bad.name.json":   {`{"api_url": "http://sim:8080", "api_key_file": "acme.key"}`, "account"},
		"nokeyfile.json":  {`{"api_url": "http://sim:8080", "api_key_file": "missing.key"}`, "api_key_file"},
		"disagrees.json":  {`{"api_url": "http://sim:8080", "api_key_file": "acme.key", "account": "acme"}`, "account"},
		"processkey.json": {`{"api_url": "http://sim:8080", "api_key_file": "acme.key", "nats_url": "nats://x:4222"}`, "nats_url"},
	}
	for name, b := range bad {
		write(t, filepath.Join(dir, name), b.content)
	}
	write(t, filepath.Join(dir, ".hidden.json"), `{`)                       // a dot-file: ignored
	write(t, filepath.Join(dir, "notes.txt"), `not an account`)             // not .json: ignored
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o700); err != nil { // a directory: ignored
		t.Fatal(err)
	}
	d, log := watch(t, dir)
	if got := names(d.Accounts()); !slices.Equal(got, []string{"acme", "beta"}) {
		t.Errorf("Accounts = %v, want [acme beta]", got)
	}
	for name, b := range bad {
		if keys := problemKeys(d, name); !slices.Contains(keys, b.key) {
			t.Errorf("%s: problems on keys %v, want one on %q", name, keys, b.key)
		}
	}
	if len(problemKeys(d, ".hidden.json"))+len(problemKeys(d, "sub.json")) > 0 {
		t.Errorf("a dot-file or directory was read: %v", d.Problems())
	}
	s, ok := d.Settings("acme")
	if !ok || s.Account != "acme" || s.APIKey.Reveal() != "key-of-acme" || s.RateLimitShare != 0.5 {
		t.Errorf("Settings(acme) = %v %v", s.Account, ok)
	}
	if _, ok := d.Settings("malformed"); ok {
		t.Error("a refused file has settings")
	}
	if strings.Contains(log.String(), "key-of-") {
		t.Error("an API key reached the log")
	}
	if _, err := WatchDir(t.Context(), filepath.Join(dir, "absent"), nil, zerolog.Nop()); err == nil {
		t.Error("WatchDir of a missing directory: no error")
	}
}

// Files that appear, change, turn bad, turn good and disappear are picked up
// while the Dir runs.
func TestDirFollowsChanges(t *testing.T) {
	dir := t.TempDir()
	writeAccount(t, dir, "acme")
	d, _ := watch(t, dir)
	digest := d.Accounts()[0].Digest

	writeAccount(t, dir, "beta")
	simtest.WaitFor(t, waitLimit, "beta appears", func() bool { return slices.Equal(names(d.Accounts()), []string{"acme", "beta"}) })

	write(t, filepath.Join(dir, "acme.json"), `{"api_url": "http://sim:8080/a/acme", "api_key_file": "acme.key", "calls_interval_seconds": 3}`)
	simtest.WaitFor(t, waitLimit, "acme's digest changes", func() bool { return d.Accounts()[0].Digest != digest })
	if s, _ := d.Settings("acme"); s.CallsInterval != 3*time.Second {
		t.Errorf("acme's new settings not read: %s", s.CallsInterval)
	}
	digest = d.Accounts()[0].Digest
	write(t, filepath.Join(dir, "acme.key"), "rotated\n")
	simtest.WaitFor(t, waitLimit, "a key rotation changes the digest", func() bool { return d.Accounts()[0].Digest != digest })

	write(t, filepath.Join(dir, "acme.json"), `{"api_url": "http://sim:8080/a/acme", "api_key_file": "acme.key", "rate_limit_share": 0}`)
	simtest.WaitFor(t, waitLimit, "acme refused", func() bool {
		return slices.Equal(names(d.Accounts()), []string{"beta"}) && slices.Contains(problemKeys(d, "acme.json"), "rate_limit_share")
	})
	writeAccount(t, dir, "acme")
	simtest.WaitFor(t, waitLimit, "acme good again", func() bool { return len(d.Accounts()) == 2 && len(d.Problems()) == 0 })

	if err := os.Remove(filepath.Join(dir, "beta.json")); err != nil {
		t.Fatal(err)
	}
	simtest.WaitFor(t, waitLimit, "beta gone", func() bool { return slices.Equal(names(d.Accounts()), []string{"acme"}) })
}

// A Kubernetes Secret or ConfigMap mount: each file is a symlink into ..data, a
// symlink to a timestamped directory that an update swaps atomically.
func TestDirFollowsAKubernetesMountSwap(t *testing.T) {
	dir := t.TempDir()
	version := func(name string, accounts ...string) {
		v := filepath.Join(dir, name)
		if err := os.Mkdir(v, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, a := range accounts {
			writeAccount(t, v, a)
		}
		write(t, filepath.Join(v, "acme.key"), "key-"+name)
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(name, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		for _, a := range accounts {
			for _, ext := range []string{".json", ".key"} {
				if err := os.Symlink(filepath.Join("..data", a+ext), filepath.Join(dir, a+ext)); err != nil && !os.IsExist(err) {
					t.Fatal(err)
				}
			}
		}
	}
	version("..2026_11_24_10_00_00.1", "acme")
	d, _ := watch(t, dir)
	if got := names(d.Accounts()); !slices.Equal(got, []string{"acme"}) {
		t.Fatalf("Accounts = %v (problems %v), want [acme]", got, d.Problems())
	}
	digest := d.Accounts()[0].Digest
	version("..2026_11_24_10_05_00.2", "acme", "beta")
	if err := os.RemoveAll(filepath.Join(dir, "..2026_11_24_10_00_00.1")); err != nil {
		t.Fatal(err)
	}
	simtest.WaitFor(t, waitLimit, "the swap read: beta added, acme's key rotated", func() bool {
		as := d.Accounts()
		return slices.Equal(names(as), []string{"acme", "beta"}) && as[0].Digest != digest
	})
	if s, _ := d.Settings("acme"); s.APIKey.Reveal() != "key-..2026_11_24_10_05_00.2" {
		t.Error("acme's key not read through the new ..data")
	}
	if len(d.Problems()) > 0 {
		t.Errorf("problems: %v", d.Problems())
	}
}

// A fleet running a directory's accounts restarts an account whose file changed
// and stops one whose file turned bad or went away.
func TestFleetRunsTheAccountsOfADir(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	dir := t.TempDir()
	writeAccount(t, dir, "acme")
	writeAccount(t, dir, "beta")
	d, log := watch(t, dir)
	f, err := New(rdb, "solo", zerolog.New(log), WithName(fleetName(t)))
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, d.Accounts, rec.work("solo")) }()
	defer func() { cancel(); <-done }()
	runs := func(want ...string) func() bool {
		return func() bool { r, _ := rec.snapshot(); return slices.Equal(slices.Sorted(maps.Keys(r)), want) }
	}
	simtest.WaitFor(t, waitLimit, "acme and beta run", runs("acme", "beta"))

	write(t, filepath.Join(dir, "acme.json"), `{"api_url": "http://sim:8080/a/acme", "api_key_file": "acme.key", "users_interval_seconds": 60}`)
	simtest.WaitFor(t, waitLimit, "acme restarted with its new settings", func() bool { _, s := rec.snapshot(); return s["acme"] == 2 })
	write(t, filepath.Join(dir, "acme.json"), `{"api_url": "http://sim:8080/a/acme"}`)
	simtest.WaitFor(t, waitLimit, "acme stopped: its file is refused", runs("beta"))
	if err := os.Remove(filepath.Join(dir, "beta.json")); err != nil {
		t.Fatal(err)
	}
	simtest.WaitFor(t, waitLimit, "beta stopped: its file is gone", runs())
}

// A file rewritten with the same size and modification time (a rewrite within
// the file system's timestamp granularity) looks unchanged to the stat a scan
// makes first: it is still read again within fullReadEvery scans.
func TestDirRereadsFilesThatLookUnchanged(t *testing.T) {
	dir := t.TempDir()
	writeAccount(t, dir, "acme")
	path := filepath.Join(dir, "acme.json")
	d, _ := watch(t, dir)
	before, ok := d.Lookup("acme")
	fi, err := os.Stat(path)
	if !ok || err != nil {
		t.Fatalf("acme: %v %v", ok, err)
	}
	write(t, path, strings.Replace(fmt.Sprintf(goodFile, "acme", "acme"), "/a/acme", "/b/acme", 1)) // same size
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(fullReadEvery*rescan + 5*time.Second)
	for {
		if a, _ := d.Lookup("acme"); a.Digest != before.Digest {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a same-size rewrite with the old modification time was never read")
		}
		time.Sleep(rescan)
	}
}
