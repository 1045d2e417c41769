package assent_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadmeExample runs the README's first Go block as a program against
// assent dev, with a demo administrator approving what it asks.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```go\n")
	code, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no Go block in README.md")
	}
	d := startDev(t)
	dir := t.TempDir()
	abs, _ := filepath.Abs(".")
	gomod := "module readme\n\ngo 1.24\n\nrequire github.com/assent-hq/assent/sdk/go v0.0.0\n\nreplace github.com/assent-hq/assent/sdk/go => " + abs + "\n"
	sum, _ := os.ReadFile("go.sum")
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(code)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	decided := decideWhenAsked(t, person(t, "admin"), map[string]any{"amount": 120, "orderId": "1042"}, "approve", map[string]any{"amount": 100})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ASSENT_BASE_URL="+d.BaseURL, "ASSENT_API_KEY="+d.AgentKey, "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	<-decided
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "approved map[amount:100 orderId:1042]") {
		t.Fatalf("the example printed:\n%s", out)
	}
}
