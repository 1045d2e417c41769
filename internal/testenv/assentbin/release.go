package assentbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Previous is the release an installation upgrades from, built from its
// commit in this repository's history (docs/releases.md says when to
// move it).
var Previous = struct {
	Version, Commit string
	// SelectsStar: the release reads tables with SELECT *, so a migration
	// adding a column ends its database sessions (docs/releases.md, "The
	// database"), and what they were answering then answers 503.
	SelectsStar bool
}{"v0.2.0", "b6481068e88fce2a93741318cc2821b1a61f4dd9", true}

// Release is Previous's binary, built from its commit once into the
// user's cache folder: later runs, and other test packages, reuse it.
func Release(t testing.TB) string {
	t.Helper()
	return must(t, release)
}

func release() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "assent-releases", Previous.Commit)
	bin := filepath.Join(dir, "assent")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("the upgrade tests build %s from this repository's history: %w", Previous.Version, err)
	}
	root := strings.TrimSpace(string(out))
	if err := exec.Command("git", "-C", root, "cat-file", "-e", Previous.Commit+"^{commit}").Run(); err != nil {
		return "", fmt.Errorf("this clone lacks %s's commit %s (a shallow clone?): fetch the history to run the upgrade tests",
			Previous.Version, Previous.Commit)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src, err := os.MkdirTemp(dir, "src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, Previous.Commit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git archive %s: %w: %s", Previous.Commit, err, out)
	}
	// Each builder writes its own file and renames it into place, so
	// packages building at once never see half a binary.
	tmp := filepath.Join(src, "assent")
	build := exec.Command("go", "build", "-ldflags",
		"-X github.com/assent-hq/assent/internal/buildinfo.version="+Previous.Version+
			" -X github.com/assent-hq/assent/internal/buildinfo.commit="+Previous.Commit,
		"-o", tmp, "./cmd/assent")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=auto")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w: %s", Previous.Version, err, out)
	}
	return bin, os.Rename(tmp, bin)
}
