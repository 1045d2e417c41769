// Command printversion prints buildinfo.Get() as JSON, for the test that
// builds it with -ldflags -X.
package main

import (
	"encoding/json"
	"os"

	"github.com/assent-hq/assent/internal/buildinfo"
)

func main() {
	_ = json.NewEncoder(os.Stdout).Encode(buildinfo.Get())
}
