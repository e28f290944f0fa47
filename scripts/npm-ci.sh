#!/usr/bin/env bash
# npm-ci.sh DIR: `npm ci` in DIR from its package-lock.json, unless
# DIR/node_modules was installed from this very lockfile (a stamp file
# holds the lockfile's sha256). CTXGATE_NPM_CI=1 forces the install.
# The test scripts call it (test-edge.sh, test-js.sh, test-openai.sh).
set -euo pipefail
dir=$1
stamp=$dir/node_modules/.ctxgate-lock.sha256
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ "${CTXGATE_NPM_CI:-}" = 1 ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	echo "npm ci ($dir/package-lock.json)" >&2
	timeout 600 npm ci --prefix "$dir" --prefer-offline --no-audit --no-fund --loglevel=error >&2
	echo "$want" >"$stamp"
fi
