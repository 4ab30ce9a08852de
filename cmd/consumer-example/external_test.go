package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The example builds and vets as a module of its own, as a team copying it would
// have it: the whole directory (tests and README included, as cp -r copies it)
// outside this module, with a go.mod that requires github.com/callbus/callbus
// (replaced by this checkout). An import of an internal package, in a test too,
// would fail go vet. It needs no network: the dependencies are this module's,
// already in the module cache.
func TestCopyBuildsAndVetsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			t.Fatalf("%s: a directory the copy test does not copy", e.Name())
		}
		f := e.Name()
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	_, goLine, _ := strings.Cut(string(rootMod), "\ngo ")
	goVersion, _, _ := strings.Cut(goLine, "\n")
	goMod := "module example.com/agentboard\n\ngo " + goVersion + "\n\nrequire github.com/callbus/callbus v0.0.0\n\nreplace github.com/callbus/callbus => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"build", "-o", filepath.Join(dir, "agentboard"), "."}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s as an external module: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
