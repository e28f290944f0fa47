#!/usr/bin/env bash
# check-jco.sh: parse ctxgate.wit with the Bytecode Alliance's own WIT parser
# (jco, from npm) and generate TypeScript types from it. Optional: the Go test
# (wit_test.go) is what keeps the WIT in step with the code; this proves the
# file is valid WIT for component tooling. Needs node and npm.
#
#   wit/check-jco.sh [OUTDIR]    # default OUTDIR: a temp dir, printed
set -euo pipefail
cd "$(dirname "$0")"
JCO_VERSION=1.35.0
tools="${HOME}/.cache/ctxgate/jco-${JCO_VERSION}"
if [ ! -x "$tools/node_modules/.bin/jco" ]; then
	mkdir -p "$tools"
	npm install --prefix "$tools" --no-audit --no-fund --silent "@bytecodealliance/jco@${JCO_VERSION}" >&2
fi
out="${1:-$(mktemp -d)}"
# jco runs its parser as a WASI component whose default preopens are empty;
# this preopens / so it can read the file.
cat > "$tools/check.mjs" <<'JS'
import { _setPreopens } from './node_modules/@bytecodealliance/jco-transpile/node_modules/@bytecodealliance/preview2-shim/dist/nodejs/filesystem.js';
_setPreopens({ '/': '/' });
const { types } = await import('./node_modules/@bytecodealliance/jco/dist/cmd/types.js');
await types(process.argv[2], { outDir: process.argv[3] + '/' });
JS
node "$tools/check.mjs" "$PWD/ctxgate.wit" "$out" >/dev/null
test -s "$out/ctxgate.d.ts"
echo "ctxgate.wit: valid (jco ${JCO_VERSION}); TypeScript types in $out"
