package assent

import (
	"bytes"
	"os"
	"testing"

	"github.com/assent-hq/assent/sdk/go/internal/gen"
)

// TestGenerated fails when generated.go is not what internal/gen makes of
// sdk/openapi.json;
// go run ./internal/gen/cmd/generate rewrites it.
func TestGenerated(t *testing.T) {
	doc, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := gen.Generate(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("generated.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("generated.go is not what internal/gen makes of sdk/openapi.json; run `go run ./internal/gen/cmd/generate` in sdk/go and commit it")
	}
}
