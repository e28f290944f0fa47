#!/usr/bin/env bash
# scripts/fuzz.sh: run every fuzz target for a bounded time, one after another.
#
#   scripts/fuzz.sh                  # every target, FUZZTIME each (default 20s)
#   FUZZTIME=2m scripts/fuzz.sh      # longer
#   scripts/fuzz.sh FuzzPrompt       # only targets whose name matches (grep -E)
#
# Targets are found, not listed: every `func Fuzz...(f *testing.F)` in a
# _test.go file of this module (the gate, the codec, bundles, gap reports, and
# host/fuzz_test.go, which runs each input natively and through the built
# modules). A finding fails the script; Go writes the crasher under the
# package's testdata/fuzz/<Target>/, where it stays as a seed for every later
# `go test` (commit it with the fix).
#
# FUZZPARALLEL (default 2) caps the fuzzing workers: the machines this runs on
# are small and shared. The host targets need the built modules (make build);
# without them they skip, except under CI=true, where they fail.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME="${FUZZTIME:-20s}"
FUZZPARALLEL="${FUZZPARALLEL:-2}"
filter="${1:-.}"

# package directory and target name, one pair per line
targets=$(grep -rEo --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' . |
	grep -v '/node_modules/' |
	sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#' |
	grep -E " .*${filter}" | sort)

if [ -z "$targets" ]; then
	echo "fuzz: no fuzz target matches '$filter'" >&2
	exit 1
fi

failed=()
while read -r dir name; do
	echo "fuzz: ./$dir $name ($FUZZTIME)" >&2
	# -run=^$ skips the ordinary tests; the seed corpus still runs first.
	if ! go test "./$dir" -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" -parallel="$FUZZPARALLEL" >"/tmp/fuzz-$name.log" 2>&1; then
		tail -n 30 "/tmp/fuzz-$name.log" >&2
		failed+=("./$dir $name")
	else
		grep -E '^fuzz: elapsed' "/tmp/fuzz-$name.log" | tail -n 1 | sed "s/^/fuzz:   /" >&2 || true
	fi
done <<<"$targets"

if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: FAILED: ${failed[*]} (crashers are in each package's testdata/fuzz/)" >&2
	exit 1
fi
echo "fuzz: $(wc -l <<<"$targets") targets, no findings" >&2
