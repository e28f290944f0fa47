#!/usr/bin/env bash
# test-openai.sh: the official OpenAI Node SDK against ctxgate serve's
# gateway (examples/openai: openai pinned in its package-lock.json).
#
#   scripts/test-openai.sh                 # needs make build (bin/ctxgate)
#   CTXGATE_OPENAI_INSTALL_ONLY=1 scripts/test-openai.sh   # only npm ci (CI's own phase)
#
# 1. npm ci in examples/openai from its lockfile (skipped when node_modules
#    was installed from this very lockfile; CTXGATE_NPM_CI=1 forces it);
# 2. node --test over examples/openai/test: a fake upstream
#    (examples/openai/upstream.mjs, a real HTTP server on an ephemeral port)
#    and real `ctxgate serve --upstream` processes, driven by the SDK.
# RUN_TIMEOUT bounds the run (300 s by default).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=$PWD/examples/openai

log() { echo "test-openai: $*" >&2; }

command -v npm >/dev/null || scripts/install-js-deps.sh
scripts/npm-ci.sh "$DIR"
[ "${CTXGATE_OPENAI_INSTALL_ONLY:-}" != 1 ] || exit 0

[ -x bin/ctxgate ] || { log "bin/ctxgate is missing: run make build"; exit 1; }
t0=$(date +%s)
rc=0
(cd "$DIR" && timeout "${RUN_TIMEOUT:-300}" node --test test/) || rc=$?
log "node --test: $(($(date +%s) - t0))s (exit $rc)"
exit $rc
