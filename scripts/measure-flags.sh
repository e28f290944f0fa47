#!/usr/bin/env bash
# measure-flags.sh: build the Extism guest with each TinyGo flag set and print
# a Markdown table of module sizes and build times (docs/build.md records the
# last runs and the choices made from them). Every row is then loaded and
# called by the module tests (guest/extism) so a flag set that traps is visible too.
#
#   scripts/measure-flags.sh            # the full matrix, ~12 builds
#   OPTS="z s" GCS=precise scripts/measure-flags.sh
#   OPTS=z GCS=precise PANICS=trap INLINE="- 100 120" SPEED=1 scripts/measure-flags.sh
#   OPTS="z 2" GCS=precise PANICS=trap FEATURES="- +simd128" SPEED=1 scripts/measure-flags.sh
#   OPTS=z GCS=precise PANICS=trap EXTRA_FLAGS=-nobounds scripts/measure-flags.sh
#
# FEATURES lists LLVM target features to add ("-" adds none), passed as
# -llvm-features (the feature list is part of TinyGo's and the ThinLTO
# cache keys, so no fresh cache is needed); wasm-opt is told about SIMD when
# a feature list names simd128. EXTRA_FLAGS is added to every build as is.
#
# INLINE lists LLVM inline thresholds to try ("-" is TinyGo's own choice):
# each value is passed to the link-time optimizer as
# -ldflags="-extldflags='-mllvm -inline-threshold=N'", which overrides the
# size-level thresholds that -opt=z/s put on every function (docs/build.md,
# "The TinyGo flags"). TinyGo's ThinLTO cache is keyed without -mllvm options,
# so a cached object built without the flag would silently come back: every
# build here runs with a fresh, private cache (the seeded libraries linked in).
#
# SPEED=1 then times every module in one interleaved run
# (go run ./bench/cmd/perf -quick -no-serve, each module as an -extra column:
# raw call path, no termination checks) and prints that report too. The
# first module is timed again as a last column, "<name>-again", so the
# report shows the measurement's own noise beside the differences between
# builds (docs/build.md, "The TinyGo flags"). Modules
# are written to a temporary directory only, never to host/wasm or dist. perf
# reads DL19 from ../shared/data beside the checkout; from a worktree elsewhere
# set CTXGATE_DATA.
set -euo pipefail
cd "$(dirname "$0")/.."

TINYGO="${TINYGO:-$(scripts/install-tinygo.sh)}"
OPTS="${OPTS:-z s 2}"
GCS="${GCS:-conservative precise}"
PANICS="${PANICS:-trap print}"
INLINE="${INLINE:--}"
FEATURES="${FEATURES:--}"
EXTRA_FLAGS="${EXTRA_FLAGS:-}"
SPEED="${SPEED:-0}"
PKG=./guest/extism
WASM_OPT_FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The installer's wrapper fixes TinyGo's cache directory; for a fresh ThinLTO
# cache per build we run the real binary with a private cache whose entries
# (seeded wasi-libc and compiler-rt, compiled packages) link to the shared one.
# The layout is install-tinygo.sh's (docs/build.md); checked, not assumed.
tinygo_fresh_lto() {
	local wrapper_dir real root shared
	wrapper_dir="$(dirname "$TINYGO")"
	real="$wrapper_dir/../root/build/tinygo"
	root="$wrapper_dir/../root"
	shared="$wrapper_dir/../cache/tinygo"
	if [ ! -x "$real" ] || [ ! -d "$shared" ]; then
		echo "measure-flags: $TINYGO is not install-tinygo.sh's layout; INLINE needs it" >&2
		exit 1
	fi
	if [ ! -d "$tmp/cache/tinygo" ]; then
		mkdir -p "$tmp/cache/tinygo"
		for e in "$shared"/*; do
			[ "$(basename "$e")" = thinlto ] || ln -s "$e" "$tmp/cache/tinygo/"
		done
	fi
	rm -rf "$tmp/cache/tinygo/thinlto"
	GOCACHE="${GOCACHE:-$(go env GOCACHE)}" TINYGOROOT="$root" XDG_CACHE_HOME="$tmp/cache" "$real" "$@"
}

extras=()
echo "| -opt | -gc | -panic | inline threshold | features | tinygo bytes | + wasm-opt -Oz bytes | build s |"
echo "| --- | --- | --- | --- | --- | ---: | ---: | ---: |"
for opt in $OPTS; do
	for gc in $GCS; do
		for panic in $PANICS; do
			for inl in $INLINE; do
				for feat in $FEATURES; do
					name="$opt-$gc-$panic"
					# shellcheck disable=SC2206 # EXTRA_FLAGS is a list of flags
					flags=(-opt="$opt" -gc="$gc" -panic="$panic" $EXTRA_FLAGS)
					wopt=("${WASM_OPT_FEATURES[@]}")
					build=("$TINYGO")
					if [ "$inl" != - ]; then
						name="$name-inline$inl"
						flags+=(-ldflags="-extldflags='-mllvm -inline-threshold=$inl'")
						build=(tinygo_fresh_lto)
					fi
					if [ "$feat" != - ]; then
						name="$name-${feat//[^a-z0-9]/}"
						flags+=(-llvm-features="$feat")
						case "$feat" in *simd128*) wopt+=(--enable-simd) ;; esac
					fi
					out="$tmp/m-$name.wasm"
					t0=$(date +%s.%N)
					"${build[@]}" build -target wasip1 -buildmode=c-shared -no-debug -scheduler=none \
						"${flags[@]}" -o "$out" "$PKG"
					t1=$(date +%s.%N)
					wasm-opt -Oz "${wopt[@]}" --strip-debug --strip-producers "$out" -o "$out.oz"
					printf '| %s | %s | %s | %s | %s | %d | %d | %.1f |\n' "$opt" "$gc" "$panic" "$inl" "$feat" \
						"$(stat -c %s "$out")" "$(stat -c %s "$out.oz")" "$(awk "BEGIN{print $t1 - $t0}")"
					extras+=(-extra "$name=$out.oz")
				done
			done
		done
	done
done

if [ "$SPEED" = 1 ]; then
	echo
	# The first module once more, last: the same bytes in another position.
	extras+=(-extra "${extras[1]%%=*}-again=${extras[1]#*=}")
	go run ./bench/cmd/perf -quick -no-serve -out - "${extras[@]}"
	exit 0
fi

# The standard-Go build of the same guest, for comparison.
t0=$(date +%s.%N)
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$tmp/go.wasm" "$PKG"
t1=$(date +%s.%N)
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -ldflags="-s -w" -o "$tmp/go-sw.wasm" "$PKG"
echo
echo "| standard Go | bytes | build s |"
echo "| --- | ---: | ---: |"
printf '| go build -buildmode=c-shared | %d | %.1f |\n' "$(stat -c %s "$tmp/go.wasm")" "$(awk "BEGIN{print $t1 - $t0}")"
printf '| ... -ldflags="-s -w" | %d | |\n' "$(stat -c %s "$tmp/go-sw.wasm")"
