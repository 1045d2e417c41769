package sdk

import (
	_ "embed"
	"slices"
)

//go:embed openapi.json
var openAPIJSON []byte

// OpenAPIJSON is the contract as JSON, for code that builds on its
// definitions without the server (the MCP tools' input schemas). The
// package's tests keep it in step with api/openapi.yaml.
func OpenAPIJSON() []byte { return slices.Clone(openAPIJSON) }
