#!/usr/bin/env bash
# check-modules.sh: the committed release modules must be exactly what the
# current sources build to. Run after build.sh (make test does), which has
# just rebuilt them in place: any difference from the committed bytes means
# a module was not regenerated after a source change (or the toolchain moved).
#
# The fix is one command, `make modules`, then committing the three files.
# Outside a git checkout there is nothing to compare with: skipped, except in
# CI, where that is an error.
set -euo pipefail
cd "$(dirname "$0")/.."

MODULES=(host/wasm/ctxgate.wasm host/wasm/ctxgate-go.wasm guest/envoy/envoy-filter.wasm)

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	if [ "${CI:-}" = true ]; then
		echo "check-modules: not a git checkout, cannot compare the committed modules" >&2
		exit 1
	fi
	echo "check-modules: not a git checkout; skipped" >&2
	exit 0
fi

bad=0
for m in "${MODULES[@]}"; do
	# Compared with the index, not HEAD: a developer who has run
	# `make modules` and staged the result passes before committing.
	if ! committed=$(git rev-parse -q --verify ":$m" 2>/dev/null); then
		echo "check-modules: $m is not committed" >&2
		bad=1
		continue
	fi
	if [ ! -f "$m" ]; then
		echo "check-modules: $m was not built" >&2
		bad=1
		continue
	fi
	if [ "$(git hash-object "$m")" != "$committed" ]; then
		echo "check-modules: $m differs from the committed module:" >&2
		echo "  committed $(git cat-file blob "$committed" | sha256sum | cut -d' ' -f1) ($(git cat-file -s "$committed") bytes)" >&2
		echo "  rebuilt   $(sha256sum <"$m" | cut -d' ' -f1) ($(stat -c %s "$m") bytes)" >&2
		bad=1
	fi
done
if [ "$bad" != 0 ]; then
	cat >&2 <<'EOF'
check-modules: the committed Wasm modules do not match the sources. Regenerate them with

    make modules

and commit host/wasm/ctxgate.wasm host/wasm/ctxgate-go.wasm guest/envoy/envoy-filter.wasm
(docs/build.md, "The committed modules").
EOF
	exit 1
fi
echo "check-modules: ${#MODULES[@]} committed modules match the sources"
