// Package buildinfo is the one place the server's version is read:
// `assent version`, /readyz, the metrics' assent_build_info and the pages'
// footer all show what Get returns.
//
// `go build` in a git checkout stamps the version from the tags (v0.1.0 on
// a tagged commit, a pseudo-version such as
// v0.1.1-0.20261130101500-abcdef123456 after it, "+dirty" with uncommitted
// changes) and the commit; `go run` and tests stamp neither, and read
// "(devel)". A build without the repository (the Dockerfile) sets them at
// link time:
//
//	go build -ldflags "-X github.com/assent-hq/assent/internal/buildinfo.version=v0.1.0 -X github.com/assent-hq/assent/internal/buildinfo.commit=<sha>"
package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Set by -ldflags "-X …"; when set they win over what the build stamped.
var version, commit string

// Devel is the version of a build that knows none: go run, go test.
const Devel = "(devel)"

// Info is what a binary knows of its build.
type Info struct {
	// Version is the release tag (v0.1.0), a pseudo-version, the one
	// set at link time, or Devel.
	Version string `json:"version"`
	// Commit is the full revision, "" when unknown.
	Commit string `json:"commit,omitempty"`
	// CommitTime is the commit's time (RFC 3339, UTC), "" when unknown.
	CommitTime string `json:"commitTime,omitempty"`
	// Modified says the tree had uncommitted changes when built.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the Go release the binary was built with.
	GoVersion string `json:"goVersion"`
}

// Get returns this binary's build information.
var Get = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return read(bi, version, commit)
})

// Version is Get().Version.
func Version() string { return Get().Version }

// read makes an Info from what the build stamped and the link-time values.
func read(bi *debug.BuildInfo, version, commit string) Info {
	i := Info{Version: Devel, GoVersion: runtime.Version()}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			i.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.time":
				i.CommitTime = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		i.Version = version
	}
	if commit != "" {
		i.Commit, i.CommitTime, i.Modified = commit, "", false
	}
	return i
}

// String is the line `assent version` prints:
// "assent v0.1.0 (commit 0123abc, 2026-11-29T10:00:00Z, go1.26.10)".
func (i Info) String() string {
	var parts []string
	if i.Commit != "" {
		c := "commit " + i.Commit[:min(len(i.Commit), 12)]
		if i.Modified {
			c += " modified"
		}
		parts = append(parts, c)
	}
	if i.CommitTime != "" {
		parts = append(parts, i.CommitTime)
	}
	parts = append(parts, i.GoVersion)
	return fmt.Sprintf("assent %s (%s)", i.Version, strings.Join(parts, ", "))
}

// BuildID names this build for Temporal's Worker Versioning, where two
// builds may share an id only if they run the same code: the version and
// commit of a build from a clean tree, else the version and a digest of
// the executable itself.
var BuildID = sync.OnceValue(func() string { return buildID(Get(), executableDigest) })

func buildID(i Info, digest func() (string, error)) string {
	if i.Commit != "" && !i.Modified {
		return i.Version + "@" + i.Commit[:min(len(i.Commit), 12)]
	}
	if sum, err := digest(); err == nil {
		return i.Version + "@" + sum
	}
	return i.Version
}

// executableDigest is the first 12 hex digits of the running executable's
// SHA-256.
func executableDigest() (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}
