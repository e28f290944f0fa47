module github.com/ctxgate/ctxgate/release

go 1.26.8

require (
	github.com/CycloneDX/cyclonedx-go v0.9.3
	github.com/google/go-containerregistry v0.22.1
	golang.org/x/mod v0.39.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	golang.org/x/sync v0.22.0 // indirect
)
