package main

import (
	"fmt"
	netmail "net/mail"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

type composeFile struct {
	Services map[string]struct {
		Image       string
		Build       any
		Command     []string
		Entrypoint  any
		Environment map[string]string
		DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
		Volumes     []string
		Ports       []string
		Profiles    []string
	}
}

// TestComposeWiring checks docker-compose.yml without a Docker engine:
// every assent process gets the settings its command reads, and they point
// at services the file defines.
func TestComposeWiring(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var cf composeFile
	require.NoError(t, yaml.Unmarshal(raw, &cf))

	pg := cf.Services["postgres"]
	require.NotEmpty(t, pg.Image)
	temporal := cf.Services["temporal"]
	assert.True(t, strings.HasPrefix(temporal.Image, "temporalio/server:"), "Temporal runs the server image, not the deprecated auto-setup")
	assert.Equal(t, "postgres12_pgx", temporal.Environment["DB"], "Temporal reaches PostgreSQL through its pgx plugin, as the local cluster does")
	assert.Equal(t, "postgres", temporal.Environment["POSTGRES_SEEDS"])
	assert.Equal(t, pg.Environment["POSTGRES_USER"], temporal.Environment["POSTGRES_USER"])
	assert.Equal(t, pg.Environment["POSTGRES_PASSWORD"], temporal.Environment["POSTGRES_PWD"])
	assert.Contains(t, cf.Services["temporal-schema"].Image, "temporalio/admin-tools")
	assert.Equal(t, "service_completed_successfully", temporal.DependsOn["temporal-schema"].Condition)
	for _, v := range cf.Services["temporal-schema"].Volumes {
		local := strings.SplitN(v, ":", 2)[0]
		_, err := os.Stat("../../" + local)
		assert.NoError(t, err, "mounted path %s exists", local)
	}
	assert.Equal(t, "temporal:7233", cf.Services["temporal-ui"].Environment["TEMPORAL_ADDRESS"])

	// Only the app is published. Temporal's frontend trusts whoever reaches
	// it, so it has no ports at all; the UI, an operator's tool, is opt-in
	// and bound to this machine.
	for name, svc := range cf.Services {
		switch name {
		case "serve":
			assert.Equal(t, []string{"8080:8080"}, svc.Ports)
		case "mailpit":
			require.NotEmpty(t, svc.Ports)
			for _, p := range svc.Ports {
				assert.True(t, strings.HasPrefix(p, "127.0.0.1:"), "the mail catcher's inbox is on this machine only: %s", p)
			}
		case "temporal-ui":
			assert.Equal(t, []string{"ui"}, svc.Profiles, "the UI starts only when asked for")
			for _, p := range svc.Ports {
				assert.True(t, strings.HasPrefix(p, "127.0.0.1:"), "the UI listens on this machine only: %s", p)
			}
			assert.Equal(t, "http://localhost:8080/temporal/codec", svc.Environment["TEMPORAL_CODEC_ENDPOINT"])
			assert.Equal(t, "true", svc.Environment["TEMPORAL_CODEC_INCLUDE_CREDENTIALS"])
			// Read-only by default (the variable temporalio/ui's docker.yaml
			// reads into disableWriteActions); the operator's shell turns
			// writes on.
			writes := svc.Environment["TEMPORAL_DISABLE_WRITE_ACTIONS"]
			assert.Equal(t, "true", interpolate(writes, nil), "the UI only reads unless asked")
			assert.Equal(t, "false", interpolate(writes, map[string]string{"TEMPORAL_DISABLE_WRITE_ACTIONS": "false"}))
		default:
			assert.Empty(t, svc.Ports, "%s publishes no port", name)
		}
	}
	assert.Equal(t, "http://localhost:8233", cf.Services["serve"].Environment["ASSENT_TEMPORAL_UI_URL"])

	needs := map[string][]string{
		"migrate": {"ASSENT_DATABASE_URL", "ASSENT_SECRET_KEY"},
		"serve":   {"ASSENT_DATABASE_URL", "ASSENT_TEMPORAL_ADDRESS", "ASSENT_TEMPORAL_NAMESPACE", "ASSENT_HTTP_ADDR", "ASSENT_BASE_URL", "ASSENT_SECRET_KEY"},
		"worker":  {"ASSENT_DATABASE_URL", "ASSENT_TEMPORAL_ADDRESS", "ASSENT_TEMPORAL_NAMESPACE", "ASSENT_BASE_URL", "ASSENT_SECRET_KEY"},
	}
	for name, vars := range needs {
		svc, ok := cf.Services[name]
		require.True(t, ok, "service %s", name)
		assert.Equal(t, []string{name}, svc.Command, "service %s runs `assent %s`", name, name)
		assert.NotNil(t, svc.Build, "service %s builds the Dockerfile", name)
		for _, v := range vars {
			assert.NotEmpty(t, svc.Environment[v], "service %s needs %s", name, v)
		}
		db, err := url.Parse(svc.Environment["ASSENT_DATABASE_URL"])
		require.NoError(t, err)
		assert.Equal(t, "postgres", db.Scheme)
		assert.Equal(t, "postgres:5432", db.Host)
		assert.Equal(t, pg.Environment["POSTGRES_USER"], db.User.Username())
		pw, _ := db.User.Password()
		assert.Equal(t, pg.Environment["POSTGRES_PASSWORD"], pw)
		assert.Equal(t, "/"+pg.Environment["POSTGRES_DB"], db.Path)
		if addr := svc.Environment["ASSENT_TEMPORAL_ADDRESS"]; addr != "" {
			assert.Equal(t, "temporal:7233", addr)
		}
		if name != "migrate" {
			assert.Equal(t, "service_completed_successfully", svc.DependsOn["migrate"].Condition, "%s waits for migrations", name)
			assert.Equal(t, "service_completed_successfully", svc.DependsOn["temporal-namespace"].Condition, "%s waits for the namespace", name)
		}
	}
	assert.True(t, strings.HasPrefix(cf.Services["serve"].Environment["ASSENT_HTTP_ADDR"], "0.0.0.0:"), "serve listens beyond the container")
	assert.Equal(t, "0.0.0.0:9464", cf.Services["serve"].Environment["ASSENT_METRICS_ADDR"], "serve's metrics on a port of their own")
	assert.NotContains(t, strings.Join(cf.Services["serve"].Ports, " "), "9464", "and not published")

	// serve and worker know the address people reach serve at, which
	// decision tokens name, and send email to the mail catcher unless told
	// of a relay.
	assert.True(t, strings.HasPrefix(cf.Services["mailpit"].Image, "axllent/mailpit:v"), "the mail catcher is pinned to a release")
	for _, name := range []string{"serve", "worker"} {
		env := cf.Services[name].Environment
		assert.Equal(t, "http://localhost:8080", interpolate(env["ASSENT_BASE_URL"], nil), "%s's base URL is serve's published address", name)
		assert.Equal(t, "https://assent.example.com", interpolate(env["ASSENT_BASE_URL"], map[string]string{"ASSENT_BASE_URL": "https://assent.example.com"}))
		assert.Equal(t, "mailpit", interpolate(env["ASSENT_SMTP_HOST"], nil), "%s sends to the mail catcher", name)
		assert.Equal(t, "1025", interpolate(env["ASSENT_SMTP_PORT"], nil), "Mailpit's SMTP port")
		assert.Equal(t, "none", interpolate(env["ASSENT_SMTP_TLS"], nil), "Mailpit speaks plain SMTP")
		from, err := netmail.ParseAddress(interpolate(env["ASSENT_SMTP_FROM"], nil))
		if assert.NoError(t, err, "%s's sender address", name) {
			assert.NotEmpty(t, from.Address)
		}
		assert.Equal(t, "relay.example.com", interpolate(env["ASSENT_SMTP_HOST"], map[string]string{"ASSENT_SMTP_HOST": "relay.example.com"}), "a real relay replaces it")
		for _, v := range []string{"ASSENT_SMTP_USERNAME", "ASSENT_SMTP_PASSWORD"} {
			assert.Contains(t, env, v, "%s passes %s through", name, v)
		}
		assert.Equal(t, "service_started", cf.Services[name].DependsOn["mailpit"].Condition, "%s starts after the mail catcher", name)
	}

	// The operator's shell: `docker compose run --rm admin init …` makes
	// the first organisation, owner and keys; the README says so.
	adminSvc := cf.Services["admin"]
	assert.Equal(t, []any{"assent", "admin"}, adminSvc.Entrypoint)
	assert.Equal(t, []string{"tools"}, adminSvc.Profiles, "the shell starts only when run")
	assert.NotNil(t, adminSvc.Build)
	assert.Equal(t, cf.Services["migrate"].Environment["ASSENT_DATABASE_URL"], adminSvc.Environment["ASSENT_DATABASE_URL"])
	assert.NotEmpty(t, adminSvc.Environment["ASSENT_SECRET_KEY"])
	assert.Equal(t, "service_completed_successfully", adminSvc.DependsOn["migrate"].Condition)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "docker compose run --rm admin init --name")
	assert.Contains(t, string(raw), "docker compose run --rm admin init --name")

	// Report files go to the MinIO bucket the minio-bucket service makes,
	// with the credentials MinIO was given.
	serve, minio := cf.Services["serve"], cf.Services["minio"]
	blobs, err := url.Parse(serve.Environment["ASSENT_BLOB_URL"])
	require.NoError(t, err)
	assert.Equal(t, "s3", blobs.Scheme)
	assert.Contains(t, fmt.Sprint(cf.Services["minio-bucket"].Entrypoint), "local/"+blobs.Host)
	assert.Equal(t, "http://minio:9000", blobs.Query().Get("endpoint"))
	assert.Equal(t, "true", blobs.Query().Get("use_path_style"))
	assert.Equal(t, minio.Environment["MINIO_ROOT_USER"], serve.Environment["AWS_ACCESS_KEY_ID"])
	assert.Equal(t, minio.Environment["MINIO_ROOT_PASSWORD"], serve.Environment["AWS_SECRET_ACCESS_KEY"])
	assert.Equal(t, "service_completed_successfully", serve.DependsOn["minio-bucket"].Condition)

	dockerfile, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	assert.Contains(t, string(dockerfile), "./cmd/assent")
	assert.Contains(t, string(dockerfile), `ENTRYPOINT ["assent"]`)
}

// interpolate reads a value as docker compose does with env: a plain
// value, ${NAME}, or ${NAME:-default} (the default when NAME is unset or
// empty).
func interpolate(value string, env map[string]string) string {
	m := regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}$`).FindStringSubmatch(value)
	if m == nil {
		return value
	}
	if v := env[m[1]]; v != "" {
		return v
	}
	return m[3]
}

// TestComposeTemporalImagesMatchGoMod keeps docker-compose.yml's Temporal
// images at the versions the binary is built and tested against: the
// server and its admin tools (whose temporal-sql-tool sets the schema up)
// at go.temporal.io/server's, the UI at ui-server's, which it is built
// from.
func TestComposeTemporalImagesMatchGoMod(t *testing.T) {
	t.Parallel()
	gomod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var cf composeFile
	require.NoError(t, yaml.Unmarshal(raw, &cf))

	images := map[string]string{ // image → the module whose version it carries
		"temporalio/server":      "go.temporal.io/server",
		"temporalio/admin-tools": "go.temporal.io/server",
		"temporalio/ui":          "github.com/temporalio/ui-server/v2",
	}
	seen := map[string]bool{}
	for name, svc := range cf.Services {
		image, tag, _ := strings.Cut(svc.Image, ":")
		module, ok := images[image]
		if !ok {
			continue
		}
		seen[image] = true
		version := requiredVersion(t, gomod, module)
		assert.Equal(t, strings.TrimPrefix(version, "v"), tag,
			"service %s runs %s:%s but go.mod builds against %s %s", name, image, tag, module, version)
	}
	for image := range images {
		assert.True(t, seen[image], "docker-compose.yml runs %s", image)
	}
}

// requiredVersion is module's version in go.mod's require lines.
func requiredVersion(t *testing.T, gomod []byte, module string) string {
	for line := range strings.Lines(string(gomod)) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	t.Fatalf("go.mod does not require %s", module)
	return ""
}
