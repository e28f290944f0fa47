#!/usr/bin/env bash
# install-js-deps.sh: what the JavaScript package's tests need beyond the
# build: Node and npm, and Debian's chromium (the browser test drives it
# with playwright-core, which downloads no browser of its own).
# Idempotent: nothing happens when both are installed.
set -euo pipefail

missing=()
command -v npm >/dev/null || missing+=(nodejs npm)
command -v "${CTXGATE_CHROMIUM:-chromium}" >/dev/null || missing+=(chromium)
[ ${#missing[@]} -gt 0 ] || exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-js-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq </dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
echo "install-js-deps: done" >&2
