#!/usr/bin/env bash
# test-install.sh: ctxgate as a new user meets it, by the READMEs' own words.
#
# A fresh copy of the tracked files of this tree (what a clone gets) is put
# at ~/ctxgate of a user whose environment has Go, Node and Debian's python3
# and nothing else: HOME elsewhere, PATH holding only go and the system
# tools, no TinyGo. Nothing is fetched beyond the package registries, and
# only what their caches lack: Go modules come from the module cache first,
# npm's cache is shared (prefer-offline), and pip has no index at all. Then,
# each with the command lines the READMEs show (read from them, not copied
# here, so a README that changes is what runs):
#
#   1. the CLI: README.md's `go install ./cmd/ctxgate` in the clone;
#   2. the library in a module of its own (~/my-module): README.md's
#      `go mod edit -replace` and `go mod tidy` lines, and host/README.md's
#      program, built; from that module, go build and go install of the CLI;
#   3. `go install github.com/ctxgate/ctxgate/cmd/ctxgate@VERSION` from a
#      module proxy in a local directory serving this tree as VERSION (the
#      zip the go command would download; release/modzip.go writes it);
#   4. the JavaScript package: packages/js/README.md's `npm ci && npm run
#      build && npm pack`, and its `npm install` of the tarball into a
#      scratch project (~/my-app);
#   5. the Python client: packages/python/README.md's venv and --user pip
#      installs.
#
# Every one of them decides REQUEST byte-identically to make build's
# bin/ctxgate (the library with the policy its program names; the Python
# client through the installed CLI's serve). The @VERSION binary must report
# VERSION and the committed modules' sha256.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

REQUEST="${REQUEST:-testdata/requests/default/inject.json}"
VERSION=v0.0.0-installtest
MODULE=github.com/ctxgate/ctxgate
log() { echo "test-install: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

[ -x bin/ctxgate ] || fail "bin/ctxgate is missing: run make build first"
want="$(bin/ctxgate eval "$REQUEST")"
request="$ROOT/$REQUEST"

tmp="$(mktemp -d)"
# The module cache makes its files read-only; make them removable first.
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# The clone, at ~/ctxgate: every tracked file as it is in the work tree (a
# tracked file deleted in the work tree is left out, as a commit would).
home="$tmp/home"
src="$home/ctxgate"
mkdir -p "$src"
git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$src"

# readme_line FILE PREFIX: the command line of a ```sh block in FILE that
# starts with PREFIX, without its trailing comment. Exactly one must match.
readme_line() {
	local lines
	lines="$(awk -v p="$2" '/^```sh$/ {sh=1; next} /^```/ {sh=0} sh && index($0, p) == 1' "$src/$1")"
	[ "$(grep -c . <<<"$lines")" = 1 ] || fail "$1: want one command line starting with '$2' in a sh block, found:
$lines"
	sed -E 's/[[:space:]]+#[^"]*$//' <<<"$lines"
}

# same WHAT GOT: GOT must be bin/ctxgate's decision of REQUEST ($want).
same() {
	[ "$2" = "$want" ] && return 0
	log "bin/ctxgate eval $REQUEST:"
	echo "$want" >&2
	log "$1:"
	echo "$2" >&2
	fail "$1 decides $REQUEST differently from bin/ctxgate"
}

# The user's environment. GOCACHE is shared so that unchanged packages are
# not compiled again (it holds compiled Go packages, no TinyGo); -trimpath
# keeps the clone's temporary path out of the cache keys for the same
# reason. Modules come from the module cache's download directory (the
# proxy protocol's layout) first, then from the configured proxy.
modcache="$(go env GOMODCACHE)"
gobin="$(dirname "$(command -v go)")"
user=(env -i "PATH=$gobin:/usr/bin:/bin" "HOME=$home" "GOPATH=$home/go" "GOMODCACHE=$modcache"
	"GOCACHE=$(go env GOCACHE)" "TMPDIR=${TMPDIR:-/tmp}" GOTOOLCHAIN=local GOSUMDB=off GOFLAGS=-trimpath
	"GOPROXY=file://$modcache/cache/download,$(go env GOPROXY)"
	"npm_config_cache=$(npm config get cache)" npm_config_prefer_offline=true npm_config_audit=false
	npm_config_fund=false npm_config_update_notifier=false npm_config_loglevel=warn
	PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore)
if "${user[@]}" sh -c 'command -v tinygo' >/dev/null; then
	fail "tinygo is on the user's PATH"
fi
[ "$("${user[@]}" sh -c 'command -v python3')" = /usr/bin/python3 ] || fail "the user's python3 is not /usr/bin/python3"
run() { (cd "$1" && shift && "${user[@]}" bash -euo pipefail -c "$*"); }

# 1. The CLI, from the clone.
t0=$(date +%s)
run "$src" "$(readme_line README.md 'go install ./cmd/ctxgate')"
cli="$home/go/bin/ctxgate"
same "go install ./cmd/ctxgate" "$("${user[@]}" "$cli" eval "$request")"
log "1. the CLI: go install ./cmd/ctxgate ($(($(date +%s) - t0))s)"

# 2. The library in a module of its own, next to the clone.
t0=$(date +%s)
mod="$home/my-module"
mkdir -p "$mod"
run "$mod" go mod init example.com/my-module 2>/dev/null
awk '/^## In your module$/ {h=1} h && /^```go$/ {go=1; next} /^```/ {if (go) exit} go' "$src/host/README.md" >"$mod/main.go"
grep -q '^package main$' "$mod/main.go" || fail "host/README.md has no program in a go block under '## In your module'"
policy="$(sed -n 's/.*policies.Get("\([a-z-]*\)").*/\1/p' "$mod/main.go")"
run "$mod" "$(readme_line README.md 'go mod edit -replace')"
run "$mod" "$(readme_line README.md 'go mod tidy')"
run "$mod" go build -o "$tmp/out/library" .
# The CLI as a dependency (its packages beyond host need go.sum lines that
# tidy, seeing only host imported, did not add: -mod=mod adds them).
run "$mod" GOFLAGS=\"-trimpath -mod=mod\" go build -o "$tmp/out/ctxgate-build" "$MODULE/cmd/ctxgate"
run "$mod" GOFLAGS=\"-trimpath -mod=mod\" GOBIN="$tmp/out/gobin" go install "$MODULE/cmd/ctxgate"
got="$("${user[@]}" "$tmp/out/library" "$request")"
[ "$got" = "$(bin/ctxgate eval --policy "$policy" "$REQUEST")" ] ||
	fail "host/README.md's program decides $REQUEST differently from bin/ctxgate eval --policy $policy:
$got"
same "go build of the CLI in a user's module" "$("${user[@]}" "$tmp/out/ctxgate-build" eval "$request")"
same "go install of the CLI in a user's module" "$("${user[@]}" "$tmp/out/gobin/ctxgate" eval "$request")"
log "2. the library: replace, go mod tidy, host/README.md's program (policy $policy) ($(($(date +%s) - t0))s)"

# 3. go install @VERSION through a local module proxy, into a private
# module cache, so the fake version never enters the real one.
t0=$(date +%s)
(cd release && go run . modzip -dir "$src" -module "$MODULE" -version "$VERSION" -out "$tmp/proxy")
run "$home" "GOMODCACHE=$tmp/gopath/pkg/mod" "GOBIN=$tmp/gopath/bin" \
	"GOPROXY=file://$tmp/proxy,file://$modcache/cache/download" go install "$MODULE/cmd/ctxgate@$VERSION"
same "go install @$VERSION" "$("${user[@]}" "$tmp/gopath/bin/ctxgate" eval "$request")"
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
log "3. go install $MODULE/cmd/ctxgate@$VERSION: $(head -1 <<<"$ver") ($(($(date +%s) - t0))s)"

# 4. The JavaScript package: built and packed in the clone, installed into
# a scratch project as a tarball.
t0=$(date +%s)
run "$src" "$(readme_line packages/js/README.md 'cd packages/js && npm ci')" >/dev/null
app="$home/my-app"
mkdir -p "$app"
echo '{"name": "my-app", "private": true, "type": "module"}' >"$app/package.json"
run "$src" "$(readme_line packages/js/README.md 'cd ~/my-app && npm install')" >/dev/null
cat >"$app/decide.mjs" <<'EOF'
import { readFileSync } from "node:fs";
import { Gate } from "@ctxgate/ctxgate";
const gate = await Gate.create({ policy: "default" });
process.stdout.write(gate.evaluateBytes(readFileSync(process.argv[2])));
EOF
same "the JavaScript package's tarball" "$(run "$app" node decide.mjs "$request")"
log "4. the JavaScript package: npm ci, build, pack, npm install of the tarball ($(($(date +%s) - t0))s)"

# 5. The Python client, with pip and no index, in a venv and for the user;
# each decides through the installed CLI's serve.
t0=$(date +%s)
run "$src" "$(readme_line packages/python/README.md 'python3 -m venv')" >/dev/null
run "$src" "$(readme_line packages/python/README.md 'python3 -m pip install --user')" >/dev/null
"${user[@]}" "$cli" serve --listen 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null; chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do
	base="$(sed -n 's/.*listening on //p' "$tmp/serve.out")"
	[ -n "$base" ] && break
	sleep 0.1
done
[ -n "$base" ] || fail "the installed ctxgate serve did not start: $(cat "$tmp/serve.err")"
client='import sys, ctxgate; sys.stdout.write(ctxgate.Client(sys.argv[1]).gate(open(sys.argv[2], "rb").read()).raw.decode())'
same "the Python client in a venv" "$(run "$home" ctxgate/.venv/bin/python -c "'$client'" "$base" "$request")"
[ "$(run "$home" python3 -c "'import ctxgate; print(ctxgate.__file__)'")" = \
	"$home/.local/lib/python3.$(/usr/bin/python3 -c 'import sys; print(sys.version_info[1])')/site-packages/ctxgate/__init__.py" ] ||
	fail "pip install --user did not install into ~/.local"
same "the Python client installed with --user" "$(run "$home" python3 -c "'$client'" "$base" "$request")"
kill "$serve_pid"
log "5. the Python client: pip install in a venv and with --user, offline ($(($(date +%s) - t0))s)"
log "ok: the CLI, the library, go install @$VERSION, the JS tarball and the Python client decide as bin/ctxgate"
