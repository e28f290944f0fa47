#!/usr/bin/env bash
# test-python.sh: the Python client (packages/python) against a real
# `ctxgate serve` that each test module starts on an ephemeral port.
# Needs bin/ctxgate (make build) and Python 3.8+ (3.11 here: one test reads
# pyproject.toml with tomllib, 3.11+). Standard library only: nothing to
# install. RUN_TIMEOUT bounds the run (300 s by default).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/ctxgate ] || { echo "test-python: bin/ctxgate is missing: run make build" >&2; exit 1; }
PYTHON=${PYTHON:-python3}
t0=$(date +%s)
rc=0
PYTHONPATH=packages/python/src timeout "${RUN_TIMEOUT:-300}" "$PYTHON" -W error::ResourceWarning \
	-m unittest discover -s packages/python/tests -t packages/python/tests -v || rc=$?
echo "test-python: $(($(date +%s) - t0))s (exit $rc)" >&2
exit $rc
