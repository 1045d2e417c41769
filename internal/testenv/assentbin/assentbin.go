// Package assentbin gives the tests that run assent as a process (killed,
// stopped, upgraded, or started by the SDKs' harness) this checkout's
// binary: ASSENT_BIN when set (.ci/run builds it once for every suite),
// else one built once per test binary. A package that uses it removes it
// after its tests: Main as its TestMain, or Remove from its own.
package assentbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Path is the binary, built on first use when ASSENT_BIN is unset.
func Path() (string, error) { return built() }

// For is the binary, failing t when it cannot be had.
func For(t testing.TB) string {
	t.Helper()
	return must(t, Path)
}

// must is the binary path finds or builds, failing t when it cannot.
func must(t testing.TB, path func() (string, error)) string {
	t.Helper()
	bin, err := path()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Remove deletes the binary Path built, if it built one.
func Remove() { remove() }

// Main runs a package's tests and then removes the binary: a TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Remove()
	os.Exit(code)
}

var (
	built = sync.OnceValues(func() (string, error) {
		if bin := os.Getenv("ASSENT_BIN"); bin != "" {
			return bin, nil
		}
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			return "", fmt.Errorf("cannot tell where assentbin's source is")
		}
		dir, err := os.MkdirTemp("", "assent-bin-")
		if err != nil {
			return "", err
		}
		remove = func() { _ = os.RemoveAll(dir) }
		bin := filepath.Join(dir, "assent")
		build := exec.Command("go", "build", "-o", bin, "./cmd/assent")
		build.Dir = filepath.Join(filepath.Dir(file), "..", "..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build ./cmd/assent: %w: %s", err, out)
		}
		return bin, nil
	})
	remove = func() {}
)
