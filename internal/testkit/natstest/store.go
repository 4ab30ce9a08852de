package natstest

import (
	"os"
	"testing"
)

// CopyStore stops the server, copies its JetStream store directory (a copy
// taken while it runs could be torn) and starts it again on the same port and
// store; it returns the copy, for RestoreStore.
func (s *Server) CopyStore(t testing.TB) string {
	t.Helper()
	s.Kill()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(s.opts.StoreDir)); err != nil {
		t.Fatalf("copy the JetStream store: %v", err)
	}
	s.start(t)
	return dir
}

// RestoreStore stops the server, puts back the store copied by CopyStore in
// place of its own and starts it again: as after a power loss that took every
// write not yet synced to disk (JetStream acknowledges before it syncs), or an
// operator restoring a backup. Messages stored since the copy are gone, the
// ones it acknowledged included.
func (s *Server) RestoreStore(t testing.TB, copied string) {
	t.Helper()
	s.Kill()
	if err := os.RemoveAll(s.opts.StoreDir); err != nil {
		t.Fatalf("remove the JetStream store: %v", err)
	}
	if err := os.CopyFS(s.opts.StoreDir, os.DirFS(copied)); err != nil {
		t.Fatalf("restore the JetStream store: %v", err)
	}
	s.start(t)
}
