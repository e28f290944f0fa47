#!/usr/bin/env bash
# dist.sh: the release artifacts, into dist/ (make dist; make build first):
#
#   ctxgate-{linux,darwin,windows}-{amd64,arm64}[.exe]  static CLI binaries
#   ctxgate.wasm ctxgate-go.wasm envoy-filter.wasm     the committed modules
#   oci/envoy-filter/   the Envoy filter as an OCI image layout (Istio WasmPlugin)
#   oci/ctxgate/        `ctxgate serve` as an OCI image layout (linux amd64+arm64)
#   ctxgate.cdx.json    CycloneDX SBOM
#   THIRD_PARTY_LICENSES.txt
#   SHA256SUMS
#
# VERSION defaults to `git describe --tags` (v0.0.0-<commit> untagged);
# every timestamp is the commit's (SOURCE_DATE_EPOCH overrides), so the same
# commit gives the same bytes. The images and the SBOM are written by
# release/ (go-containerregistry, cyclonedx-go), which reads everything back
# before it returns.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "dist: $*" >&2; }
now() { date +%s.%N; }
took() { awk "BEGIN{printf \"%.1fs\", $(now) - $1}"; }

revision="$(git rev-parse HEAD 2>/dev/null || echo "")"
dirty=""
if [ -n "$revision" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	dirty="-dirty"
fi
VERSION="${VERSION:-$(git describe --tags --match 'v*' 2>/dev/null || echo "v0.0.0-${revision:0:12}")$dirty}"
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
SOURCE_URL="${SOURCE_URL:-https://github.com/ctxgate/ctxgate}"
TINYGO_VERSION="$(sed -n 's/^VERSION="\${TINYGO_VERSION:-\(.*\)}"$/\1/p' scripts/install-tinygo.sh)"
tinygo="$(scripts/install-tinygo.sh)"

rm -rf dist
mkdir -p dist
t0=$(now)
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
	os="${target%/*}" arch="${target#*/}"
	out="dist/ctxgate-$os-$arch"
	[ "$os" = windows ] && out="$out.exe"
	t1=$(now)
	# Static (no cgo), no local paths (-trimpath), no symbol tables (-s -w:
	# panics still name functions), the version at link time.
	CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath \
		-ldflags "-s -w -X main.version=$VERSION" -o "$out" ./cmd/ctxgate
	log "$out $(took "$t1")"
done

(cd release && go run . dist -root .. -dist ../dist -version "$VERSION" -revision "$revision" \
	-created "$SOURCE_DATE_EPOCH" -source "$SOURCE_URL" \
	-tinygo "$TINYGO_VERSION" -tinygo-dir "$(dirname "$tinygo")/../root")
log "images, SBOM, licences and SHA256SUMS written and read back ($(took "$t0") in all)"

echo "dist/ ($VERSION):"
(cd dist && find . -maxdepth 1 -type f ! -name '.*' -printf '%f\n' | sort | while read -r f; do
	awk -v f="$f" -v s="$(stat -c %s "$f")" 'BEGIN{printf "  %-28s %10d bytes\n", f, s}'
done)
for l in envoy-filter ctxgate; do
	digest="$(sed -n 's/.*"digest": *"\(sha256:[0-9a-f]*\)".*/\1/p' "dist/oci/$l/index.json" | head -1)"
	echo "  oci/$l  $VERSION  $digest"
done
