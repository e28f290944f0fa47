#!/usr/bin/env bash
# test-tinygo.sh: the pure packages' unit tests compiled by TinyGo for
# wasip1 and run over wazero, the compiler and the target the guest ships
# with. `go test` runs the same tests natively; this catches what only the
# TinyGo build does differently (its runtime, its reflect, its math).
#
#   scripts/test-tinygo.sh                   # every package below
#   scripts/test-tinygo.sh ./gate/jsonx      # only the named packages
#   TINYGO_TEST_FLAGS="-run TestGolden" scripts/test-tinygo.sh ./gate
#
# The tests run with -short by default (TINYGO_TEST_FLAGS replaces it): the
# exhaustive grids (every float of a 2-million grid, every flipped byte of a
# signed bundle) sample under TinyGo, where they took minutes; `go test`
# runs them whole.
#
# Each package's test binary runs in `wazero run` (the CLI of go.mod's
# wazero, built once into the cache) with the repository mounted read-only
# at "/" and CTXGATE_TEST_DIR naming the package's directory there, which
# internal/testenv changes to (a test binary on wasip1 starts in "/").
# Prints "tinygo: N passed, K skipped, M failed ..., T s" (and the slowest
# tests of each package) and exits 1 on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${CTXGATE_CACHE:-$HOME/.cache/ctxgate}
RUN_TIMEOUT=${RUN_TIMEOUT:-10m} # one package's test run inside wazero

log() { echo "test-tinygo: $*" >&2; }

pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	# The gate and its leaf packages (every gate/internal package with tests).
	mapfile -t leaves < <(find gate/internal -name '*_test.go' -printf './%h\n' | sort -u)
	pkgs=(./internal/abi "${leaves[@]}" ./gate/jsonx ./gate/chat ./gate/bundle ./gate)
fi

# TinyGo splits the emulator command on spaces.
case "$ROOT" in *" "*) log "the repository path has a space ($ROOT); TinyGo cannot mount it"; exit 2 ;; esac

tinygo=${TINYGO:-$(scripts/install-tinygo.sh)}
# The wazero CLI at the version go.mod requires (go.sum pins it).
version=$(go list -m -f '{{.Version}}' github.com/tetratelabs/wazero)
wazero=$CACHE/bin/wazero-$version
if [ ! -x "$wazero" ]; then
	mkdir -p "$CACHE/bin"
	go build -o "$wazero.tmp" github.com/tetratelabs/wazero/cmd/wazero
	mv -f "$wazero.tmp" "$wazero"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ctxgate-tinygo.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_pkg compiles and runs one package's tests, writing its output to
# $work/<pkg>.out and its exit code to $work/<pkg>.rc.
run_pkg() {
	local pkg=$1 dir=${1#./} target out rc=0
	target=$work/wasip1-${dir//\//-}.json
	cat >"$target" <<EOF
{
	"inherits": ["wasip1"],
	"emulator": "$wazero run -timeout=$RUN_TIMEOUT -mount=$ROOT:/:ro -mount={tmpDir}:/tmp -env=CTXGATE_TEST_DIR=/$dir {}"
}
EOF
	out=$work/${dir//\//-}.out
	"$tinygo" test -target="$target" -v ${TINYGO_TEST_FLAGS:--short} "$pkg" >"$out" 2>&1 || rc=$?
	echo "$rc" >"$work/${dir//\//-}.rc"
}

# The packages build and run TINYGO_JOBS at a time (default: the number of
# cores): a TinyGo build is one core's work for most of a minute, and CI
# builds eleven packages.
jobs=${TINYGO_JOBS:-$(nproc)}
t0=$(date +%s)
for pkg in "${pkgs[@]}"; do
	[ -d "${pkg#./}" ] || { log "no package directory ${pkg#./}"; exit 2; }
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n || true
	done
	run_pkg "$pkg" &
done
wait

passed=0
skipped=0
failed=0
bad=()
for pkg in "${pkgs[@]}"; do
	dir=${pkg#./}
	out=$work/${dir//\//-}.out
	rc=$(cat "$work/${dir//\//-}.rc" 2>/dev/null || echo 1)
	p=$(grep -c '^--- PASS' "$out" || true)
	k=$(grep -c '^--- SKIP' "$out" || true)
	f=$(grep -c '^--- FAIL' "$out" || true)
	passed=$((passed + p))
	skipped=$((skipped + k))
	failed=$((failed + f))
	if [ "$rc" != 0 ] || [ "$f" != 0 ] || ! grep -q '^ok ' "$out"; then
		bad+=("$pkg")
		grep -E '^(--- FAIL|FAIL|panic|ok )|^\s+\S+_test\.go:[0-9]+:' "$out" | head -40 >&2 || true
		tail -20 "$out" >&2
	fi
	log "$pkg: $p passed, $k skipped, $f failed ($(grep -E '^(ok|FAIL)\s' "$out" | tail -1 || echo "exit $rc"))"
	grep -E '^--- (PASS|FAIL)' "$out" | sed -E 's/.*: (\S+) \(([0-9.]+)s\)/\2 \1/' | sort -rn | head -3 |
		awk -v p="$pkg" '$1 >= 1 { printf "test-tinygo:   %s %s %.1fs\n", p, $2, $1 }' >&2
done
secs=$(($(date +%s) - t0))
echo "tinygo: $passed passed, $skipped skipped, $failed failed (top-level tests), ${#bad[@]} packages failed, ${secs}s"
if [ ${#bad[@]} -gt 0 ]; then
	log "failed: ${bad[*]}"
	exit 1
fi
