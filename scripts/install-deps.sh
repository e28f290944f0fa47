#!/usr/bin/env bash
# install-deps.sh: the Debian packages the build and tests need (LLVM 19 to
# build TinyGo, wasi-libc and compiler-rt to link wasm, binaryen for
# wasm-opt, Chromium to render the HTML gap report in a test, Prometheus for
# promtool, which checks a live /metrics page in a test, Debian's python3
# with venv for the Python client).
# Idempotent: when every package is already installed it does nothing, so
# `make` can call it on every run without touching the network.
set -euo pipefail

PKGS=(
	llvm-19-dev libclang-19-dev clang-19 lld-19   # TinyGo links against LLVM 19
	wasi-libc libclang-rt-19-dev-wasm32           # prebuilt libc and builtins for wasm32-wasi
	binaryen                                      # wasm-opt
	chromium                                      # headless, for TestGapsReportInChromium
	prometheus                                    # promtool, for TestPromtoolCheckMetrics (not run as a service)
	git ca-certificates                           # go build of TinyGo reads vcs info; harmless
	python3 python3-venv                          # the Python client's tests and its pip install in a venv (test-install.sh)
)

missing=()
for p in "${PKGS[@]}"; do
	# dpkg-query exits non-zero for unknown packages; Status must say installed.
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq </dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
echo "install-deps: done" >&2
