package sdk_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	assent "github.com/assent-hq/assent/sdk/go"
)

// TestOneVersion: a release is one version everywhere (docs/releases.md).
// The Go SDK's Version, the TypeScript and Python packages, the Helm
// chart's version and appVersion, the CHANGELOG's newest release and the
// image tag docs/operations.md installs all say it; the server's own is
// its tag, v<version>.
func TestOneVersion(t *testing.T) {
	want := assent.Version
	require.Regexp(t, `^\d+\.\d+\.\d+$`, want, "sdk/go's Version is X.Y.Z, the release's tag without its v")
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.FromSlash(path))
		require.NoError(t, err)
		return string(b)
	}
	match := func(path, pattern string) string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(read(path))
		require.NotNil(t, m, "%s: no %s", path, pattern)
		return m[1]
	}

	var pkg struct{ Version string }
	require.NoError(t, json.Unmarshal([]byte(read("typescript/package.json")), &pkg))
	var lock struct {
		Version  string
		Packages map[string]struct{ Version string }
	}
	require.NoError(t, json.Unmarshal([]byte(read("typescript/package-lock.json")), &lock))
	var chart struct{ Version, AppVersion string }
	require.NoError(t, yaml.Unmarshal([]byte(read("../deploy/helm/assent/Chart.yaml")), &chart))
	_, project, ok := strings.Cut(read("python/pyproject.toml"), "\n[project]\n")
	require.True(t, ok)
	project, _, _ = strings.Cut(project, "\n[")

	for where, got := range map[string]string{
		"sdk/typescript/package.json":                pkg.Version,
		"sdk/typescript/package-lock.json":           lock.Version,
		"sdk/typescript/package-lock.json's package": lock.Packages[""].Version,
		"sdk/typescript/src/version.ts":              match("typescript/src/version.ts", `VERSION = "([^"]+)"`),
		"sdk/python/pyproject.toml":                  regexp.MustCompile(`(?m)^version = "([^"]+)"$`).FindStringSubmatch(project)[1],
		"sdk/python/assent/_version.py":              match("python/assent/_version.py", `__version__ = "([^"]+)"`),
		"deploy/helm/assent/Chart.yaml's version":    chart.Version,
		"deploy/helm/assent/Chart.yaml's appVersion": chart.AppVersion,
		"docs/operations.md's image tag":             match("../docs/operations.md", `image: \{repository: registry\.example\.com/assent, tag: "([^"]+)"\}`),
		"CHANGELOG.md's newest release":              newestRelease(t, read("../CHANGELOG.md")),
	} {
		assert.Equal(t, want, got, "%s says %s, sdk/go's Version %s: bump them in one commit (docs/releases.md)", where, got, want)
	}
}

// newestRelease checks CHANGELOG.md's headings (Unreleased, then each
// release, newest first, dated, each with its link) and returns the
// newest release's version.
func newestRelease(t *testing.T, changelog string) string {
	t.Helper()
	headings := regexp.MustCompile(`(?m)^## (.*)$`).FindAllStringSubmatch(changelog, -1)
	require.NotEmpty(t, headings)
	assert.Equal(t, "[Unreleased]", headings[0][1], "the first heading is [Unreleased]")
	release := regexp.MustCompile(`^\[(\d+)\.(\d+)\.(\d+)\] - \d{4}-\d{2}-\d{2}$`)
	var versions [][3]int
	newest := ""
	for _, h := range headings[1:] {
		m := release.FindStringSubmatch(h[1])
		if !assert.NotNil(t, m, "a release's heading is ## [X.Y.Z] - YYYY-MM-DD: %q", h[1]) {
			continue
		}
		v := strings.Join(m[1:], ".")
		if newest == "" {
			newest = v
		}
		link := "\n[" + v + "]: https://github.com/assent-hq/assent/releases/tag/v" + v + "\n"
		assert.True(t, strings.Contains(changelog, link), "CHANGELOG.md lacks %s's link: %s", v, strings.TrimSpace(link))
		var n [3]int
		for i := range n {
			n[i], _ = strconv.Atoi(m[i+1])
		}
		if len(versions) > 0 {
			p := versions[len(versions)-1]
			assert.True(t, p[0] > n[0] || p[0] == n[0] && (p[1] > n[1] || p[1] == n[1] && p[2] > n[2]), "%s after a newer one", v)
		}
		versions = append(versions, n)
	}
	require.NotEmpty(t, newest, "CHANGELOG.md names no release")
	return newest
}
