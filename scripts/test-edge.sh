#!/usr/bin/env bash
# test-edge.sh: the gate module in workerd, Node and Deno (issue 7), and
# through the raw ABI from Node (docs/abi.md).
#
#   scripts/test-edge.sh            # all four; needs host/wasm/ctxgate.wasm (make build)
#   scripts/test-edge.sh edge node  # only the named runtimes: edge node deno abi
#   CTXGATE_EDGE_INSTALL_ONLY=1 scripts/test-edge.sh   # only step 1 (npm ci)
#
# 1. npm ci in examples/ (from the lockfile; skipped when node_modules was
#    installed from this very lockfile, CTXGATE_NPM_CI=1 forces it);
# 2. workerd serve examples/edge/config.capnp on 127.0.0.1, on a port the OS
#    picked (probed; retried if another process takes it first);
# 3. examples/edge/test.mjs posts every golden request and requires each
#    decision byte-identical to the golden file (the Go runner's bytes),
#    malformed input must give the error JSON with its 4xx, plus the gateway;
# 4. workerd is stopped by its PID, TERM then KILL within STOP_TIMEOUT
#    seconds, on every exit path (trap);
# 5. the same golden check under Node (examples/node/check.mjs) and Deno
#    (examples/deno/check.ts);
# 6. abi: the golden check through examples/abi-host/host.mjs, a host written
#    from docs/abi.md alone (raw exports, no Extism SDK), beside the Extism
#    path; its timing runs the 20-chunk workload of bench/cmd/workload (TREC
#    DL19 from CTXGATE_DATA or ../shared/data, else synthetic prose).
#
# Each runtime prints "<runtime>: N passed, M failed"; per-call timings are
# printed after it (reported, never asserted; CTXGATE_TIMING=0 skips them).
# Every wait is bounded. Exit status: 1 when any runtime failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
EX=$ROOT/examples
WASM=${CTXGATE_WASM:-$ROOT/host/wasm/ctxgate.wasm}
START_TIMEOUT=${START_TIMEOUT:-30}  # seconds for workerd to answer /healthz
STOP_TIMEOUT=${STOP_TIMEOUT:-10}    # seconds from TERM to a dead workerd
RUN_TIMEOUT=${RUN_TIMEOUT:-600}     # seconds for one runtime's check

log() { echo "test-edge: $*" >&2; }
die() { log "$*"; exit 1; }

runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(edge node deno abi)
for r in "${runtimes[@]}"; do
	case "$r" in edge | node | deno | abi) ;; *) die "unknown runtime $r (want edge node deno abi)" ;; esac
done

command -v node >/dev/null || die "node is not installed (Node 20: apt-get install nodejs npm)"
[ -f "$WASM" ] || [ "${CTXGATE_EDGE_INSTALL_ONLY:-}" = 1 ] || die "$WASM is missing: run make build"
# config.capnp embeds host/wasm/ctxgate.wasm by path: another module can be
# tried under Node, Deno and abi only.
if [ "$WASM" != "$ROOT/host/wasm/ctxgate.wasm" ] && [[ " ${runtimes[*]} " == *" edge "* ]]; then
	die "CTXGATE_WASM applies to node, deno and abi only; workerd loads host/wasm/ctxgate.wasm (config.capnp)"
fi
export CTXGATE_WASM=$WASM

failed=0
workerd_pid=""
logfile=$(mktemp "${TMPDIR:-/tmp}/ctxgate-workerd.XXXXXX")

# stop_workerd: TERM, wait up to STOP_TIMEOUT, then KILL. Only our PID.
stop_workerd() {
	[ -n "$workerd_pid" ] || return 0
	local pid=$workerd_pid t0 waited
	workerd_pid=""
	kill -TERM "$pid" 2>/dev/null || return 0
	t0=$(date +%s%N)
	for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "workerd (pid $pid) ignored TERM for ${STOP_TIMEOUT}s; KILL"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	waited=$((($(date +%s%N) - t0) / 1000000))
	log "workerd (pid $pid) stopped in ${waited} ms"
}
cleanup() {
	stop_workerd
	rm -f "$logfile"
}

# run: a command in the background, waited for, so a signal to this script
# is handled at once (bash runs traps only between foreground commands) and
# reaches the command too.
child=""
run() {
	local rc=0
	"$@" &
	child=$!
	wait "$child" || rc=$?
	child=""
	return $rc
}
on_signal() {
	[ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true
	exit 130
}
trap cleanup EXIT
trap on_signal INT TERM

# 1. npm ci, unless node_modules already holds exactly this lockfile.
run scripts/npm-ci.sh "$EX"
# .ci/run installs in a phase of its own, before `make test`.
[ "${CTXGATE_EDGE_INSTALL_ONLY:-}" != 1 ] || exit 0

# free_port asks the OS for an unused port (bind to 0, read it, release it).
# Another process may take it before workerd binds: start_workerd retries.
free_port() {
	node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

start_workerd() {
	local port attempt
	for attempt in 1 2 3; do
		port=$(free_port)
		"$EX/node_modules/.bin/workerd" serve "$EX/edge/config.capnp" \
			--socket-addr "http=127.0.0.1:$port" >"$logfile" 2>&1 &
		workerd_pid=$!
		for ((i = 0; i < START_TIMEOUT * 10; i++)); do
			if ! kill -0 "$workerd_pid" 2>/dev/null; then
				break
			fi
			if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$port/default/healthz" 2>/dev/null; then
				PORT=$port
				log "workerd (pid $workerd_pid) serving on 127.0.0.1:$port"
				return 0
			fi
			sleep 0.1
		done
		if kill -0 "$workerd_pid" 2>/dev/null; then
			stop_workerd
			log "workerd did not answer within ${START_TIMEOUT}s"
			sed 's/^/  workerd: /' "$logfile" >&2
			return 1
		fi
		wait "$workerd_pid" 2>/dev/null || true
		workerd_pid=""
		if grep -q "Address already in use" "$logfile"; then
			log "port $port was taken before workerd bound it (attempt $attempt); another port"
			continue
		fi
		log "workerd exited at start:"
		sed 's/^/  workerd: /' "$logfile" >&2
		return 1
	done
	return 1
}

run_edge() {
	start_workerd || return 1
	local rc=0
	run timeout "$RUN_TIMEOUT" node "$EX/edge/test.mjs" "http://127.0.0.1:$PORT" || rc=$?
	stop_workerd
	return $rc
}

run_node() {
	NODE_NO_WARNINGS=1 run timeout "$RUN_TIMEOUT" node "$EX/node/check.mjs"
}

run_deno() {
	# DENO_DIR in a temp dir: nothing is fetched (the npm package comes from
	# examples/node_modules), and nothing is written into $HOME.
	local dir rc=0
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ctxgate-deno.XXXXXX")
	# From examples/: Deno finds package.json (and so node_modules) from the
	# working directory.
	cd "$EX"
	DENO_DIR=$dir DENO_NO_UPDATE_CHECK=1 NO_COLOR=1 run timeout "$RUN_TIMEOUT" \
		node_modules/.bin/deno run --quiet --allow-read --allow-env --allow-write=/dev/null \
		--allow-run --allow-net=127.0.0.1 deno/check.ts || rc=$?
	cd "$ROOT"
	rm -rf "$dir"
	return $rc
}

run_abi() {
	local workload="" rc=0
	if [ "${CTXGATE_TIMING:-}" != 0 ]; then
		workload=$(mktemp "${TMPDIR:-/tmp}/ctxgate-workload.XXXXXX")
		if ! run timeout "$RUN_TIMEOUT" go run ./bench/cmd/workload -chunks 20 -per 4 >"$workload"; then
			log "abi: no timing workload (go run ./bench/cmd/workload failed); timing the golden request"
			rm -f "$workload"
			workload=""
		fi
	fi
	CTXGATE_ABI_WORKLOAD=$workload CTXGATE_ABI_WORKLOAD_NAME="20 chunks" NODE_NO_WARNINGS=1 \
		run timeout "$RUN_TIMEOUT" node "$EX/abi-host/check.mjs" || rc=$?
	[ -z "$workload" ] || rm -f "$workload"
	return $rc
}

for r in "${runtimes[@]}"; do
	log "$r"
	if ! "run_$r"; then
		log "$r: FAILED"
		failed=1
	fi
done
exit $failed
