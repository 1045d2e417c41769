package config_test

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/config"
)

// The README's table of settings is rendered from config.Settings, between
// these two lines. ASSENT_UPDATE_README=1 go test ./internal/config
// rewrites it after a setting changes.
const (
	tableStart = "<!-- settings: generated from internal/config/settings.go; ASSENT_UPDATE_README=1 go test ./internal/config rewrites it -->\n"
	tableEnd   = "<!-- end of settings -->\n"
)

func TestReadmeListsEverySetting(t *testing.T) {
	const path = "../../README.md"
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	readme := string(raw)
	start, end := strings.Index(readme, tableStart), strings.Index(readme, tableEnd)
	require.True(t, start >= 0 && end > start, "README.md marks its table of settings with %q and %q", tableStart, tableEnd)
	start += len(tableStart)
	want := "\n" + config.SettingsTable() + "\n"
	if os.Getenv("ASSENT_UPDATE_README") == "1" {
		require.NoError(t, os.WriteFile(path, []byte(readme[:start]+want+readme[end:]), 0o644))
		return
	}
	assert.Equal(t, want, readme[start:end], "README.md's table of settings is stale: ASSENT_UPDATE_README=1 go test ./internal/config rewrites it")
}

// Every variable the package reads is in Settings, every setting with a
// flag declares it with its stated default, and the others declare none.
func TestSettingsAreTheFlags(t *testing.T) {
	listed := map[string]bool{}
	for _, s := range config.Settings {
		assert.False(t, listed[s.Env], "%s is listed twice", s.Env)
		listed[s.Env] = true
		t.Setenv(s.Env, "")
		assert.NotEmpty(t, s.UsedBy, "%s names the commands that read it", s.Env)
		for _, c := range s.UsedBy {
			assert.Contains(t, config.Commands, c, "%s's UsedBy", s.Env)
		}
	}
	for _, file := range []string{"config.go", "settings.go"} {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, name := range regexp.MustCompile(`ASSENT_[A-Z_]*[A-Z]`).FindAllString(string(src), -1) {
			assert.True(t, listed[name], "%s reads %s, which Settings does not list", file, name)
		}
	}

	var c config.Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	c.Register(fs)
	flags := 0
	for _, s := range config.Settings {
		if s.Flag == "" {
			continue
		}
		flags++
		f := fs.Lookup(s.Flag)
		if assert.NotNil(t, f, "--%s is declared", s.Flag) {
			assert.Equal(t, s.Default, f.DefValue, "--%s's default", s.Flag)
			assert.Contains(t, f.Usage, "("+s.Env+")", "--%s's help names its variable", s.Flag)
			assert.NotContains(t, f.Usage, "`", "--%s's help has no backquote, which flag would read as the argument's name", s.Flag)
		}
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	assert.Equal(t, flags, n, "every flag is a setting")
}
