#!/usr/bin/env bash
# build.sh: the full build. Writes the release modules, which are committed so
# that `go install` and `go get` work without TinyGo (docs/build.md):
#   host/wasm/ctxgate.wasm, host/wasm/ctxgate-go.wasm  the Extism guest (the host
#                                                      embeds this directory, so
#                                                      they are built first)
#   guest/envoy/envoy-filter.wasm                      the Envoy filter (TinyGo)
# then, into bin/, the filter's standard-Go build (envoy-filter-go.wasm, for
# comparison; not shipped) and the CLI, and prints the module sizes. Release
# artifacts are `make dist`'s (scripts/dist.sh), in dist/.
#
#   ./build.sh              # everything
#   ./build.sh tinygo go    # only the named parts: tinygo go envoy cli
#   ./build.sh modules      # only the committed modules (make modules)
#
# Flag choices are measured in docs/build.md (scripts/measure-flags.sh).
# TINYGO_FLAGS overrides them, e.g. TINYGO_FLAGS="-opt=z -gc=precise -panic=print"
# for a module that prints panic messages (stderr) before it traps.
set -euo pipefail
cd "$(dirname "$0")"

OUT=host/wasm
FILTER=guest/envoy/envoy-filter.wasm
TINYGO_FLAGS="${TINYGO_FLAGS:--opt=z -gc=precise -panic=trap}"
# TinyGo already runs wasm-opt at its -opt level; a second -Oz pass with
# stripping saves ~7% more (docs/build.md). Features match TinyGo's wasip1 target.
WASM_OPT_FLAGS=(-Oz --strip-debug --strip-producers
	--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals)
# The TinyGo module's size budget (issue 3): 400 KB, checked after every build.
# CTXGATE_SIZE_BUDGET=0 disables the check for experiments.
SIZE_BUDGET="${CTXGATE_SIZE_BUDGET:-409600}"

log() { echo "build: $*" >&2; }
now() { date +%s.%N; }
took() { awk "BEGIN{printf \"%.1fs\", $(now) - $1}"; }

# install puts a finished file in place only when the build succeeded, so a
# failed build never leaves a truncated module for the host to embed. The
# mode is fixed (644, or $3): mktemp's 0600 would make the committed modules
# unreadable to anyone but the builder (a container build, another user).
install_file() { chmod "${3:-644}" "$1" && mv -f "$1" "$2"; }

# inputs_hash hashes everything a TinyGo build of package $2 can read: every
# file (tests aside) in each of its packages inside this repo, whatever the
# build tags, plus go.mod, go.sum, the flags and both toolchains' versions.
# Module-cache and GOROOT files are fixed by go.sum and the versions. Built
# modules and dot-files (the stamps) are outputs, not inputs: the filter is
# committed inside its own package directory.
inputs_hash() {
	local tinygo="$1" pkg="$2" here
	here="$(pwd)"
	{
		echo "$TINYGO_FLAGS ${WASM_OPT_FLAGS[*]}"
		"$tinygo" version
		wasm-opt --version
		GOOS=wasip1 GOARCH=wasm go list -deps -f '{{.Dir}}' "$pkg" |
			grep -F "$here/" | sort | while read -r d; do
				find "$d" -maxdepth 1 -type f ! -name '*_test.go' ! -name '*.wasm' ! -name '.*' -print0 |
					sort -z | xargs -0 sha256sum
			done
		sha256sum go.mod go.sum
	} | sha256sum | cut -d' ' -f1
}

# tinygo_module PKG OUTPUT: the TinyGo build of a guest, then wasm-opt.
# TinyGo takes 20-60 s here and `make test` builds first, so an unchanged
# guest is not rebuilt: the stamp beside the output holds the hash of its
# inputs and of the output itself, so a module that git replaced (a checkout,
# a merge) is rebuilt even when the sources match. CTXGATE_FORCE=1 rebuilds
# anyway.
tinygo_module() {
	local pkg="$1" out="$2" tinygo t0 tmp stamp hash
	tinygo="${TINYGO:-$(scripts/install-tinygo.sh)}"
	t0=$(now)
	stamp="$(dirname "$out")/.$(basename "$out").inputs"
	hash="$(inputs_hash "$tinygo" "$pkg")"
	if [ "${CTXGATE_FORCE:-0}" != 1 ] && [ -f "$out" ] &&
		[ "$(cat "$stamp" 2>/dev/null)" = "$hash $(sha256sum <"$out" | cut -d' ' -f1)" ]; then
		log "tinygo $pkg: up to date ($(took "$t0"))"
		return
	fi
	rm -f "$stamp"
	tmp="$(mktemp "$(dirname "$out")/.build.XXXXXX")"
	# shellcheck disable=SC2086 # TINYGO_FLAGS is a list of flags
	"$tinygo" build -target wasip1 -buildmode=c-shared -no-debug -scheduler=none \
		$TINYGO_FLAGS -o "$tmp.wasm" "$pkg"
	wasm-opt "${WASM_OPT_FLAGS[@]}" "$tmp.wasm" -o "$tmp"
	rm -f "$tmp.wasm"
	install_file "$tmp" "$out"
	echo "$hash $(sha256sum <"$out" | cut -d' ' -f1)" >"$stamp"
	log "tinygo $pkg ($TINYGO_FLAGS) $(took "$t0")"
}

build_tinygo() {
	tinygo_module ./guest/extism "$OUT/ctxgate.wasm"
}

# -buildvcs=false: the module is committed, so its bytes must not depend on
# the commit it is built from (the revision would be stamped otherwise).
build_go() {
	local t0 tmp
	t0=$(now)
	tmp="$(mktemp "$OUT/.ctxgate-go.XXXXXX")"
	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -buildmode=c-shared -o "$tmp" ./guest/extism
	install_file "$tmp" "$OUT/ctxgate-go.wasm"
	log "go $(took "$t0")"
}

# is_main tells whether a package directory exists and holds a main package
# for the given GOOS/GOARCH (other engineers add these directories).
is_main() {
	[ -d "$1" ] && [ "$(GOOS=$2 GOARCH=$3 go list -f '{{.Name}}' "./$1" 2>/dev/null)" = main ]
}

# The Envoy filter is not in host/wasm/: the host embeds that directory into
# every binary, and no Go host runs the filter. The TinyGo build ships (11x
# smaller, faster in both ABI hosts; docs/envoy.md) and is committed beside
# its source; the standard-Go build, the toolchain the SDK supports, is built
# into bin/ for comparison.
build_envoy() {
	local t0 tmp
	if ! is_main guest/envoy wasip1 wasm; then
		log "envoy: guest/envoy has no main package yet; skipped"
		return
	fi
	tinygo_module ./guest/envoy "$FILTER"
	[ "${CTXGATE_MODULES_ONLY:-0}" = 1 ] && return
	mkdir -p bin
	t0=$(now)
	tmp="$(mktemp bin/.envoy-go.XXXXXX)"
	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -buildmode=c-shared -o "$tmp" ./guest/envoy
	install_file "$tmp" bin/envoy-filter-go.wasm
	log "envoy (go) $(took "$t0")"
}

build_cli() {
	local t0
	if ! is_main cmd/ctxgate "$(go env GOHOSTOS)" "$(go env GOHOSTARCH)"; then
		log "cli: cmd/ctxgate does not exist yet; skipped"
		return
	fi
	t0=$(now)
	mkdir -p bin
	go build -trimpath -o bin/ctxgate.tmp ./cmd/ctxgate
	install_file bin/ctxgate.tmp bin/ctxgate 755
	log "cli $(took "$t0")"
}

print_sizes() {
	local f size
	echo "module sizes:"
	for f in "$OUT/ctxgate.wasm" "$OUT/ctxgate-go.wasm" "$FILTER" bin/envoy-filter-go.wasm; do
		[ -f "$f" ] || continue
		size=$(stat -c %s "$f")
		awk -v f="$f" -v s="$size" 'BEGIN{printf "  %-30s %9d bytes  %7.1f KiB\n", f, s, s/1024}'
	done
	if [ -f bin/ctxgate ]; then
		size=$(stat -c %s bin/ctxgate)
		awk -v s="$size" 'BEGIN{printf "  %-30s %9d bytes  %7.1f MiB\n", "bin/ctxgate", s, s/1048576}'
	fi
}

check_budget() {
	local size
	[ "$SIZE_BUDGET" != 0 ] && [ -f "$OUT/ctxgate.wasm" ] || return 0
	size=$(stat -c %s "$OUT/ctxgate.wasm")
	if [ "$size" -gt "$SIZE_BUDGET" ]; then
		echo "build: $OUT/ctxgate.wasm is $size bytes, over the $SIZE_BUDGET-byte budget (docs/build.md)" >&2
		exit 1
	fi
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(tinygo go envoy cli)
mkdir -p "$OUT"
for p in "${parts[@]}"; do
	case "$p" in
	tinygo | go | envoy | cli) "build_$p" ;;
	# The committed modules only, for `make modules` after a merge.
	modules) build_tinygo && build_go && CTXGATE_MODULES_ONLY=1 build_envoy ;;
	*) echo "build.sh: unknown part $p (want tinygo go envoy cli modules)" >&2; exit 2 ;;
	esac
done
print_sizes
check_budget
