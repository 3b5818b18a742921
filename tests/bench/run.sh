#!/usr/bin/env bash
# Builds the benchmark in release mode and runs it: every client × server × workload in its own
# process, interleaved in batches. Arguments go to `mcpwire-bench run`, for example:
#   tests/bench/run.sh                     # the full run: 3 batches (about 13 minutes on 2 cores)
#   tests/bench/run.sh --quick             # 1 batch with smaller counts (a smoke test, about 4 minutes)
#   tests/bench/run.sh --only w1 --servers min,python-http --impls mcpwire,rmcp,floor
#   tests/bench/run.sh --only many          # 100 servers under one Manager (20 with --quick)
# Results (raw JSON lines, the tables as markdown, the servers' stderr) go to tests/bench/results/.
set -euo pipefail
cd "$(dirname "$0")"

command -v node >/dev/null || { echo "node is required (the stdio servers and server-everything)"; exit 1; }
[ -d ../peers/node_modules/@modelcontextprotocol/server-everything ] \
  || { echo "server-everything is missing: run (cd tests/peers && npm ci)"; exit 1; }
[ -x ../peers/pyvenv/bin/python ] \
  || { echo "the Python peer is missing: run tests/peers/install-python.sh"; exit 1; }

# The syscall pass reads the kernel's tracepoints: mount tracefs where it is not (as root; an
# unprivileged run reports the syscall columns as missing, with the reason, and goes on).
if [ ! -e /sys/kernel/tracing/events/raw_syscalls ] && [ "$(id -u)" = 0 ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

cargo build --release --bins
# The many-servers workload runs `mcpwire serve-demo`: the command line of this checkout, built
# in the repository's own target folder (MCPWIRE_BENCH_CLI names another binary).
if [ -z "${MCPWIRE_BENCH_CLI:-}" ]; then
  (cd ../.. && cargo build --release -p mcpwire-cli)
  MCPWIRE_BENCH_CLI="$(cd ../.. && cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/mcpwire"
  export MCPWIRE_BENCH_CLI
fi
exec "${CARGO_TARGET_DIR:-target}/release/mcpwire-bench" run "$@"
