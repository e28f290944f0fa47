#!/usr/bin/env bash
# test-install.sh: ctxgate as a user meets it, with the Go toolchain alone.
#
# From the tracked files of this tree (what a clone gets), in an environment
# where no TinyGo can be found (HOME elsewhere, PATH holding only go and the
# system tools) and nothing is downloaded (GOPROXY points at local files):
#
#   1. a scratch module outside the repo that requires ctxgate and replaces
#      it with the clone builds, with `go build` alone, a small library
#      program over package host and the CLI, and `go install`s the CLI;
#   2. `go install github.com/ctxgate/ctxgate/cmd/ctxgate@VERSION` from a
#      module proxy in a local directory serving this tree as VERSION (the
#      zip the go command would download; release/modzip.go writes it);
#
# and every binary decides REQUEST byte-identically to make build's
# bin/ctxgate. The @VERSION binary must report VERSION and the committed
# modules' sha256.
set -euo pipefail
cd "$(dirname "$0")/.."

REQUEST="${REQUEST:-testdata/requests/default/inject.json}"
VERSION=v0.0.0-installtest
MODULE=github.com/ctxgate/ctxgate
log() { echo "test-install: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

[ -x bin/ctxgate ] || fail "bin/ctxgate is missing: run make build first"
want="$(bin/ctxgate eval "$REQUEST")"

tmp="$(mktemp -d)"
# The module cache makes its files read-only; make them removable first.
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# The clone: every tracked file as it is in the work tree (a tracked file
# deleted in the work tree is left out, as a commit of the tree would).
src="$tmp/ctxgate"
mkdir -p "$src"
git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$src"

# The user's environment. GOCACHE is shared so that unchanged packages are
# not compiled again (it holds compiled Go packages, no TinyGo); -trimpath
# keeps the clone's temporary path out of the cache keys for the same reason.
modcache="$(go env GOMODCACHE)"
gobin="$(dirname "$(command -v go)")"
user=(env -i "PATH=$gobin:/usr/bin:/bin" "HOME=$tmp/home" "GOPATH=$tmp/gopath"
	"GOCACHE=$(go env GOCACHE)" "TMPDIR=${TMPDIR:-/tmp}" GOTOOLCHAIN=local GOSUMDB=off)
mkdir -p "$tmp/home"
if "${user[@]}" sh -c 'command -v tinygo' >/dev/null; then
	fail "tinygo is on the user's PATH"
fi
[ ! -e "$tmp/home/.cache/ctxgate" ] || fail "the user's HOME has a TinyGo cache"

# 1. A scratch module that replaces ctxgate with the clone. Dependencies come
# from the module cache as it is (GOPROXY=off: nothing is downloaded).
scratch="$tmp/scratch"
mkdir -p "$scratch"
cat >"$scratch/go.mod" <<EOF
module example.com/scratch

go $(sed -n 's/^go //p' "$src/go.mod")

require $MODULE v0.0.0-00010101000000-000000000000

replace $MODULE => $src
EOF
cp "$src/go.sum" "$scratch/go.sum"
cat >"$scratch/main.go" <<'EOF'
// A program using ctxgate as a library: decide the request named on the
// command line with the embedded TinyGo module and the default policy.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/ctxgate/ctxgate/host"
)

func main() {
	req, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	g, err := host.New(ctx, host.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer g.Close(ctx)
	out, err := g.Evaluate(ctx, req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(append(out, '\n'))
}
EOF
scratch_env=("${user[@]}" "GOMODCACHE=$modcache" GOPROXY=off "GOFLAGS=-mod=mod -trimpath")
(
	cd "$scratch"
	# No `go mod tidy`: it would also resolve the tests of the dependencies,
	# which are not in the module cache. -mod=mod adds what the builds need.
	"${scratch_env[@]}" go build -o "$tmp/out/library" .
	"${scratch_env[@]}" go build -o "$tmp/out/ctxgate-build" "$MODULE/cmd/ctxgate"
	"${scratch_env[@]}" GOBIN="$tmp/out/gobin" go install "$MODULE/cmd/ctxgate"
)
log "scratch module: library program, go build and go install of the CLI built"

# 2. go install @VERSION through a local module proxy. The dependencies are
# served from the module cache's download directory (the proxy protocol's
# layout), into a private module cache, so the fake version never enters
# the real one.
(cd release && go run . modzip -dir "$src" -module "$MODULE" -version "$VERSION" -out "$tmp/proxy")
(
	cd "$tmp/home"
	"${user[@]}" "GOMODCACHE=$tmp/gopath/pkg/mod" GOFLAGS=-trimpath \
		"GOPROXY=file://$tmp/proxy,file://$modcache/cache/download" \
		go install "$MODULE/cmd/ctxgate@$VERSION"
)
log "go install $MODULE/cmd/ctxgate@$VERSION built"

for bin in "$tmp/out/library" "$tmp/out/ctxgate-build" "$tmp/out/gobin/ctxgate" "$tmp/gopath/bin/ctxgate"; do
	case "$bin" in
	*/library) got="$("${user[@]}" "$bin" "$REQUEST")" ;;
	*) got="$("${user[@]}" "$bin" eval "$REQUEST")" ;;
	esac
	if [ "$got" != "$want" ]; then
		log "bin/ctxgate eval $REQUEST:"
		echo "$want" >&2
		log "${bin#"$tmp"/}:"
		echo "$got" >&2
		fail "${bin#"$tmp"/} decides $REQUEST differently from bin/ctxgate"
	fi
done
log "4 binaries decide $REQUEST byte-identically to bin/ctxgate"

# The installed binary reports the module version and the committed modules.
ver="$("${user[@]}" "$tmp/gopath/bin/ctxgate" --version)"
case "$(head -1 <<<"$ver")" in
"ctxgate $VERSION "*) ;;
*) fail "go install @$VERSION reports: $(head -1 <<<"$ver")" ;;
esac
for m in host/wasm/ctxgate.wasm host/wasm/ctxgate-go.wasm; do
	sum="$(git cat-file blob ":$m" | sha256sum | cut -d' ' -f1)"
	grep -q "sha256 $sum" <<<"$ver" || fail "ctxgate --version does not report the committed $m ($sum):
$ver"
done
log "ok: $(head -1 <<<"$ver")"
