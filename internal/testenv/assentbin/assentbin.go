// Package assentbin gives the tests that run assent as a process (killed,
// stopped, upgraded, or started by the SDKs' harness) this checkout's
// binary: ASSENT_BIN when set (.ci/run builds it once for every suite),
// else one built once per test binary. A package that uses it calls
// Remove from its TestMain.
package assentbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// Path is the binary, built on first use when ASSENT_BIN is unset.
func Path() (string, error) { return built() }

// Remove deletes the binary Path built, if it built one.
func Remove() { remove() }

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
