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

# corpus_count DIR NAME: how many inputs the target's corpus holds on disk.
corpus_count() {
	if [ -d "$1/testdata/fuzz/$2" ]; then
		find "$1/testdata/fuzz/$2" -type f | wc -l
	else
		echo 0
	fi
}

# A bare "context deadline exceeded" at the -fuzztime boundary, with no input
# written, is Go's own coordinator racing its deadline (go.dev/issue/75804,
# fixed in Go 1.27, present in every 1.26.x): a worker still mid-call when the
# clock runs out. It is reported, not failed. Anything else fails: a new
# crasher in testdata/fuzz, a panic, a t.Error, a build error.
is_deadline_race() {
	local log=$1
	grep -q '^    context deadline exceeded$' "$log" &&
		! grep -qE 'Failing input written to|^    [a-z_]+_test\.go:[0-9]+:|panic:|^# ' "$log"
}

failed=()
flaked=()
while read -r dir name; do
	echo "fuzz: ./$dir $name ($FUZZTIME)" >&2
	log="/tmp/fuzz-$name.log"
	before=$(corpus_count "$dir" "$name")
	# -run=^$ skips the ordinary tests; the seed corpus still runs first.
	if go test "./$dir" -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" -parallel="$FUZZPARALLEL" >"$log" 2>&1; then
		grep -E '^fuzz: elapsed' "$log" | tail -n 1 | sed "s/^/fuzz:   /" >&2 || true
	elif [ "$(corpus_count "$dir" "$name")" = "$before" ] && is_deadline_race "$log"; then
		echo "fuzz:   no finding; Go's fuzztime deadline race (go.dev/issue/75804) ended the run" >&2
		grep -E '^fuzz: elapsed' "$log" | tail -n 1 | sed "s/^/fuzz:   /" >&2 || true
		flaked+=("./$dir $name")
	else
		tail -n 30 "$log" >&2
		failed+=("./$dir $name")
	fi
done <<<"$targets"

if [ ${#flaked[@]} -gt 0 ]; then
	echo "fuzz: deadline race, not a finding: ${flaked[*]}" >&2
fi

if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: FAILED: ${failed[*]} (crashers are in each package's testdata/fuzz/)" >&2
	exit 1
fi
echo "fuzz: $(wc -l <<<"$targets") targets, no findings" >&2
