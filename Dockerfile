# ctxgate serve as a container image, built from source with the Go
# toolchain alone (the Wasm modules are committed; no TinyGo needed):
#
#   docker build -t ctxgate --build-arg VERSION=v0.1.0 .
#   docker run --rm -p 8080:8080 ctxgate
#   docker run --rm -p 8080:8080 -v $PWD/policy.json:/etc/ctxgate/policy.json:ro \
#       ctxgate serve --listen :8080 --policy /etc/ctxgate/policy.json
#
# `make dist` writes the same image without a container runtime
# (dist/oci/ctxgate, linux/amd64 and linux/arm64; docs/deploy.md). Both run
# the static binary as the non-root user 65532 with the built-in default
# policy unless --policy or --config says otherwise.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.version=$VERSION" -o /out/ctxgate ./cmd/ctxgate

# distroless static: CA certificates (gateway mode calls HTTPS upstreams),
# tzdata, /etc/passwd with nonroot, no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ctxgate /ctxgate
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/ctxgate"]
CMD ["serve", "--listen", ":8080"]
