// Command generate rewrites sdk/go/generated.go from sdk/openapi.json; run
// it from sdk/go: go run ./internal/gen/cmd/generate
package main

import (
	"fmt"
	"os"

	"github.com/assent-hq/assent/sdk/go/internal/gen"
)

func main() {
	doc, err := os.ReadFile("../openapi.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := gen.Generate(doc)
	if err == nil {
		err = os.WriteFile("generated.go", out, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
