#!/usr/bin/env bash
# What mcpwire's `tracing` instrumentation costs a call (W1): the mcpwire client built without
# the `tracing` feature, with it (no subscriber, and a subscriber recording everything), and with
# `opentelemetry` (no subscriber, and tracing-opentelemetry into the SDK), measured in the same
# batches. Arguments go to `mcpwire-bench tracing-cost`, for example:
#   tests/bench/tracing_cost.sh                         # 3 batches, min and python-http
#   tests/bench/tracing_cost.sh --batches 5 --servers min
#   tests/bench/tracing_cost.sh --no-valgrind           # without the instruction pass
#   tests/bench/tracing_cost.sh --no-otel               # without the `opentelemetry` build
#     (that build changes features across the crate graph: most of it is built again)
# The instruction pass runs each client under Valgrind's callgrind (`valgrind` on the PATH).
set -euo pipefail
cd "$(dirname "$0")"

command -v node >/dev/null || { echo "node is required (the stdio server)"; exit 1; }
[ -x ../peers/pyvenv/bin/python ] \
  || { echo "the Python peer is missing: run tests/peers/install-python.sh"; exit 1; }
if [ ! -e /sys/kernel/tracing/events/raw_syscalls ] && [ "$(id -u)" = 0 ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

otel=1
args=()
for a in "$@"; do
  if [ "$a" = --no-otel ]; then otel=0; else args+=("$a"); fi
done

release="${CARGO_TARGET_DIR:-target}/release"
# The same crate three ways: cargo keeps each feature set's build apart, so only mcpwire and
# this crate are built again; each client binary is kept under a name of its own.
cargo build --release --no-default-features --bin mcpwire-bench-mcpwire
cp "$release/mcpwire-bench-mcpwire" "$release/mcpwire-bench-mcpwire-notracing"
if [ "$otel" = 1 ]; then
  cargo build --release --features otel --bin mcpwire-bench-mcpwire
  cp "$release/mcpwire-bench-mcpwire" "$release/mcpwire-bench-mcpwire-otel"
else
  rm -f "$release/mcpwire-bench-mcpwire-otel"
fi
cargo build --release --bin mcpwire-bench --bin mcpwire-bench-mcpwire
exec "$release/mcpwire-bench" tracing-cost ${args[@]+"${args[@]}"}
