// Package sdk holds what the Go, TypeScript and Python SDKs share: the
// contract as JSON (openapi.json, rendered from api/openapi.yaml) and the
// test vectors of signed deliveries and decision tokens
// (testdata/vectors.json), made by the server's own webhook and
// decisiontoken packages. Its tests regenerate both and fail when a
// committed file differs; ASSENT_UPDATE_SDK=1 rewrites them.
//
// The SDKs themselves live in sdk/python and sdk/go (its own module, which
// holds the webhook and decisiontoken packages); sdk/harness starts a real
// `assent dev` for their suites.
package sdk
