// Package helm holds the tests of Assent's Helm chart (./assent), in a
// module of its own so that Helm's and Kubernetes' libraries stay out of
// the server's go.mod and its go test ./... (.ci/run tests it apart).
//
// The module requires the server's through a replace, to check the chart
// against internal/config's Settings itself rather than against a copy:
// internal/config imports only the standard library, internal/secretkey
// and internal/netguard, so that builds nothing heavy.
package helm
