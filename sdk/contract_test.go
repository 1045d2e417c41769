package sdk_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// updateEnv names the variable that rewrites the generated files instead
// of comparing them.
const updateEnv = "ASSENT_UPDATE_SDK"

// checkGenerated compares want with the committed file at path, or
// rewrites it when ASSENT_UPDATE_SDK=1.
func checkGenerated(t *testing.T, path string, want []byte) {
	t.Helper()
	if os.Getenv(updateEnv) == "1" {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, want, 0o644))
		return
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err, "run the test with %s=1 to write it", updateEnv)
	if !bytes.Equal(got, want) {
		t.Fatalf("sdk/%s is not what the server's sources make; run `%s=1 go test ./sdk/` and commit it", path, updateEnv)
	}
}

// TestOpenAPIJSON keeps sdk/openapi.json the contract api/openapi.yaml
// is, as JSON (what the server serves at /api/v1/openapi.json, indented):
// the SDKs' drift tests read it, and Python has no YAML parser.
func TestOpenAPIJSON(t *testing.T) {
	source, err := os.ReadFile(filepath.Join("..", "api", "openapi.yaml"))
	require.NoError(t, err)
	compact, err := yaml.YAMLToJSON(source)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, json.Indent(&out, compact, "", "  "))
	out.WriteByte('\n')
	checkGenerated(t, "openapi.json", out.Bytes())
}
