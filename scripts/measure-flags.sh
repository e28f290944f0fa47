#!/usr/bin/env bash
# measure-flags.sh: build the Extism guest with each TinyGo flag set and print
# a Markdown table of module sizes and build times (docs/build.md records the
# last run and the choice made from it). Every row is then loaded and called
# by the module tests (guest/extism) so a flag set that traps is visible too.
#
#   scripts/measure-flags.sh            # the full matrix, ~12 builds
#   OPTS="z s" GCS=precise scripts/measure-flags.sh
set -euo pipefail
cd "$(dirname "$0")/.."

TINYGO="${TINYGO:-$(scripts/install-tinygo.sh)}"
OPTS="${OPTS:-z s 2}"
GCS="${GCS:-conservative precise}"
PANICS="${PANICS:-trap print}"
PKG=./guest/extism
WASM_OPT_FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "| -opt | -gc | -panic | tinygo bytes | + wasm-opt -Oz bytes | build s |"
echo "| --- | --- | --- | ---: | ---: | ---: |"
for opt in $OPTS; do
	for gc in $GCS; do
		for panic in $PANICS; do
			out="$tmp/m-$opt-$gc-$panic.wasm"
			t0=$(date +%s.%N)
			"$TINYGO" build -target wasip1 -buildmode=c-shared -no-debug -scheduler=none \
				-opt="$opt" -gc="$gc" -panic="$panic" -o "$out" "$PKG"
			t1=$(date +%s.%N)
			wasm-opt -Oz "${WASM_OPT_FEATURES[@]}" --strip-debug --strip-producers "$out" -o "$out.oz"
			printf '| %s | %s | %s | %d | %d | %.1f |\n' "$opt" "$gc" "$panic" \
				"$(stat -c %s "$out")" "$(stat -c %s "$out.oz")" "$(awk "BEGIN{print $t1 - $t0}")"
		done
	done
done

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
