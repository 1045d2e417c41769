package systemd_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/config"
)

var units = []string{"assent-migrate.service", "assent-serve.service", "assent-worker.service"}

// TestUnitsVerify runs Debian's systemd-analyze over the units, which
// says nothing when each directive is known and well formed (it exits 0
// on a mistake too, so its output is what counts).
func TestUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("ASSENT_REQUIRE_SYSTEMD") == "1" {
			t.Fatal("systemd-analyze is required (ASSENT_REQUIRE_SYSTEMD=1): apt-get install systemd")
		}
		t.Skip("no systemd-analyze (apt-get install systemd)")
	}
	env, err := filepath.Abs("assent.env")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range units {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		// verify wants the binary and the environment file to exist.
		unit := strings.NewReplacer("/usr/local/bin/assent", "/usr/bin/true", "/etc/assent/assent.env", env).Replace(string(b))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(unit), 0o644))
	}
	cmd := exec.Command(analyze, append([]string{"verify"}, prefixed(dir, units)...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify found something")
}

// TestUnitsRunTheBinary: each unit runs a subcommand of the binary from
// the environment file, and every variable they set is a setting the
// binary reads.
func TestUnitsRunTheBinary(t *testing.T) {
	known := map[string]bool{}
	for _, s := range config.Settings {
		known[s.Env] = true
	}
	assignment := regexp.MustCompile(`^#?\s*([A-Z][A-Z0-9_]*)=`)
	f, err := os.Open("assent.env")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	seen := 0
	for sc.Scan() {
		if m := assignment.FindStringSubmatch(sc.Text()); m != nil {
			seen++
			assert.True(t, known[m[1]], "assent.env sets %s, which the binary does not read", m[1])
		}
	}
	require.NoError(t, sc.Err())
	assert.Greater(t, seen, 5)
	for _, s := range []string{"ASSENT_DATABASE_URL", "ASSENT_SECRET_KEY", "ASSENT_BASE_URL"} {
		b, _ := os.ReadFile("assent.env")
		assert.Contains(t, string(b), "\n"+s+"=", "the required %s is set", s)
	}

	for _, name := range units {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		unit := string(b)
		sub := strings.TrimSuffix(strings.TrimPrefix(name, "assent-"), ".service")
		assert.Contains(t, unit, "\nExecStart=/usr/local/bin/assent "+sub+"\n", name)
		assert.Contains(t, unit, "\nEnvironmentFile=/etc/assent/assent.env\n", name)
		for _, line := range strings.Split(unit, "\n") {
			if v, ok := strings.CutPrefix(line, "Environment="); ok {
				name, _, _ := strings.Cut(strings.Trim(v, `"`), "=")
				assert.True(t, known[name], "%s sets %s, which the binary does not read", name, v)
			}
		}
		for _, hardening := range []string{"DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict", "StateDirectory=assent"} {
			assert.Contains(t, unit, "\n"+hardening+"\n", name)
		}
	}
}

func prefixed(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}
