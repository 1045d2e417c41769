package buildinfo

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func stamped(version string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/assent-hq/assent", Version: version}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

const rev = "0123456789abcdef0123456789abcdef01234567"

// What the build stamped, and the link-time values over it.
func TestRead(t *testing.T) {
	gov := runtime.Version()
	for _, tc := range []struct {
		name            string
		bi              *debug.BuildInfo
		version, commit string
		want            Info
		line            string
	}{
		{"a release", stamped("v0.1.0", "vcs.revision", rev, "vcs.time", "2026-11-29T10:00:00Z", "vcs.modified", "false"), "", "",
			Info{Version: "v0.1.0", Commit: rev, CommitTime: "2026-11-29T10:00:00Z", GoVersion: gov},
			"assent v0.1.0 (commit 0123456789ab, 2026-11-29T10:00:00Z, " + gov + ")"},
		{"between releases, edited", stamped("v0.1.1-0.20261130101500-0123456789ab+dirty", "vcs.revision", rev, "vcs.time", "2026-11-30T10:15:00Z", "vcs.modified", "true"), "", "",
			Info{Version: "v0.1.1-0.20261130101500-0123456789ab+dirty", Commit: rev, CommitTime: "2026-11-30T10:15:00Z", Modified: true, GoVersion: gov},
			"assent v0.1.1-0.20261130101500-0123456789ab+dirty (commit 0123456789ab modified, 2026-11-30T10:15:00Z, " + gov + ")"},
		{"go run", stamped(Devel), "", "", Info{Version: Devel, GoVersion: gov}, "assent (devel) (" + gov + ")"},
		{"no build info", nil, "", "", Info{Version: Devel, GoVersion: gov}, "assent (devel) (" + gov + ")"},
		{"the Dockerfile's", stamped(Devel), "v0.2.0", "abc1234", Info{Version: "v0.2.0", Commit: "abc1234", GoVersion: gov},
			"assent v0.2.0 (commit abc1234, " + gov + ")"},
		{"a version set over a stamped one", stamped("v0.1.0", "vcs.revision", rev, "vcs.time", "2026-11-29T10:00:00Z"), "v0.1.0-rc.1", "", Info{Version: "v0.1.0-rc.1", Commit: rev, CommitTime: "2026-11-29T10:00:00Z", GoVersion: gov},
			"assent v0.1.0-rc.1 (commit 0123456789ab, 2026-11-29T10:00:00Z, " + gov + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := read(tc.bi, tc.version, tc.commit)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.line, got.String())
		})
	}
}

// Tests build without VCS stamping: the version is Devel.
func TestGetUnderTest(t *testing.T) {
	assert.Equal(t, Devel, Version())
	assert.Regexp(t, `^assent \(devel\) \(go1\.\d+`, Get().String())
}

// ldflag is the -X flag the Dockerfile passes; a renamed variable fails
// here, built as the Dockerfile builds.
const ldflag = "-X github.com/assent-hq/assent/internal/buildinfo.version="

func TestLinkTimeVersion(t *testing.T) {
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.QuoteMeta(ldflag)+`\$\{VERSION\}`, string(dockerfile))
	assert.Contains(t, string(dockerfile), strings.Replace(ldflag, ".version=", ".commit=", 1)+"${COMMIT}")

	bin := filepath.Join(t.TempDir(), "printversion")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin,
		"-ldflags", ldflag+"v9.8.7 "+strings.Replace(ldflag, ".version=", ".commit=", 1)+"feedface", "./testdata/printversion")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin).Output()
	require.NoError(t, err)
	var got Info
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Equal(t, Info{Version: "v9.8.7", Commit: "feedface", GoVersion: got.GoVersion}, got)
	assert.NotEmpty(t, got.GoVersion)
}

// TestBuildID: a build that knows no clean commit (a test binary) is named
// by its version and its executable's digest, the same each time.
func TestBuildID(t *testing.T) {
	id := BuildID()
	assert.Regexp(t, `^`+regexp.QuoteMeta(Version())+`@[0-9a-f]{12}$`, id)
	sum, err := executableDigest()
	require.NoError(t, err)
	assert.Equal(t, Version()+"@"+sum, id)

	digest := func() (string, error) { return "0123456789ab", nil }
	assert.Equal(t, "v0.2.0@abcdef123456", buildID(Info{Version: "v0.2.0", Commit: "abcdef1234567890"}, digest), "a clean commit")
	assert.Equal(t, "v0.2.0@0123456789ab", buildID(Info{Version: "v0.2.0", Commit: "abcdef1234567890", Modified: true}, digest),
		"uncommitted changes: the executable")
}
