package fleet

import (
	"fmt"
	"testing"

	"github.com/rs/zerolog"
)

// BenchmarkDirScan reads a directory of 1,000 account files once (what a Dir
// does every rescan period): go test -run '^$' -bench DirScan -benchmem ./internal/fleet
func BenchmarkDirScan(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		writeAccount(b, dir, fmt.Sprintf("acct-%04d", i))
	}
	d := &Dir{dir: dir, log: zerolog.Nop(), files: map[string]fileState{}}
	b.ResetTimer()
	for b.Loop() {
		if err := d.scan(); err != nil {
			b.Fatal(err)
		}
	}
	if n := len(d.Accounts()); n != 1000 {
		b.Fatalf("%d accounts, want 1000 (problems %v)", n, d.Problems()[:1])
	}
}

// BenchmarkOwner assigns 1,000 accounts among 10 members (what every check
// does): go test -run '^$' -bench Owner -benchmem ./internal/fleet
func BenchmarkOwner(b *testing.B) {
	accounts := accountNames(1000)
	members := accountNames(10)
	for b.Loop() {
		for _, a := range accounts {
			Owner(a, members)
		}
	}
}
