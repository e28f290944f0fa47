#!/usr/bin/env bash
# test-js.sh: the JavaScript package (packages/js, @ctxgate/ctxgate).
#
#   scripts/test-js.sh                 # everything; needs make build (module and bin/ctxgate)
#   scripts/test-js.sh gate langchain  # only test/<name>.test.mjs for each name
#   CTXGATE_JS_INSTALL_ONLY=1 scripts/test-js.sh   # only the installs (CI's own phase)
#
# 1. Node, npm and Debian's chromium (scripts/install-js-deps.sh; a no-op
#    when present);
# 2. npm ci in packages/js from its lockfile (what the build compiles
#    against), and in packages/js/test/runtime from its own (Deno, workerd,
#    playwright-core: only the tests need them); each is skipped when its
#    node_modules was installed from that very lockfile (CTXGATE_NPM_CI=1
#    forces it);
# 3. npm run build: the presets from policies/, tsc (TypeScript 7.0.2),
#    host/wasm/ctxgate.wasm copied into the package;
# 4. node --test over packages/js/test: Node, the client against a real
#    ctxgate serve, real @langchain/core and llamaindex, Deno, workerd,
#    headless Chromium, npm pack. Each runtime prints "<runtime>: N passed".
# Every wait is bounded (RUN_TIMEOUT for the whole run, 900 s by default).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PKG=$ROOT/packages/js
RUN_TIMEOUT=${RUN_TIMEOUT:-900}

log() { echo "test-js: $*" >&2; }
die() { log "$*"; exit 1; }

scripts/install-js-deps.sh

scripts/npm-ci.sh "$PKG"
scripts/npm-ci.sh "$PKG/test/runtime"
[ "${CTXGATE_JS_INSTALL_ONLY:-}" != 1 ] || exit 0

[ -f host/wasm/ctxgate.wasm ] || die "host/wasm/ctxgate.wasm is missing: run make build"
[ -x bin/ctxgate ] || die "bin/ctxgate is missing: run make build"

t0=$(date +%s)
(cd "$PKG" && node scripts/build.mjs)
log "build: $(($(date +%s) - t0))s"

cd "$PKG"
files=()
if [ $# -gt 0 ]; then
	for n in "$@"; do
		[ -f "test/$n.test.mjs" ] || die "no test/$n.test.mjs"
		files+=("test/$n.test.mjs")
	done
else
	files=(test/*.test.mjs)
fi
t0=$(date +%s)
rc=0
timeout "$RUN_TIMEOUT" node --test "${files[@]}" || rc=$?
log "node --test: $(($(date +%s) - t0))s (exit $rc)"
exit $rc
