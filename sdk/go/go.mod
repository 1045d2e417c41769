module github.com/assent-hq/assent/sdk/go

go 1.24.0

require (
	github.com/go-jose/go-jose/v4 v4.1.6
	github.com/gowebpki/jcs v1.0.2
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
