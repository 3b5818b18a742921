#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/peers) against mcpwire's `conformance-client` for the client scenarios we support.
#
# The suite's scenario servers listen on every interface, so the suite runs inside a network
# namespace that has only loopback (`unshare -n`, then `lo` up). Without `unshare` (or without
# the right to use it) the script fails rather than run them anywhere else.
#
# Prints one line per scenario (PASS/FAIL, checks passed, time; a failing scenario is followed
# by the suite's output, indented), then `N passed, N failed`. Exits 1 when any scenario fails.
#
# Environment:
#   MCPWIRE_CONFORMANCE_CLIENT  the client binary to test (default: build it with cargo)
#   MCPWIRE_SKIP_PEERS=1        skip (say so and exit 0) instead of failing when peers are missing
#   MCPWIRE_CONFORMANCE_TIMEOUT the suite's per-client timeout in ms (default 30000)
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)
PEERS=tests/peers
SUITE_JS=$PEERS/node_modules/@modelcontextprotocol/conformance/dist/index.js
NODE_BIN=$PEERS/node_modules/node/bin
TIMEOUT_MS=${MCPWIRE_CONFORMANCE_TIMEOUT:-30000}

if [ "${MCPWIRE_SKIP_PEERS:-}" = 1 ]; then
    echo "conformance: skipped because MCPWIRE_SKIP_PEERS=1"
    exit 0
fi

die() {
    echo "conformance: $*" >&2
    echo "conformance: (set MCPWIRE_SKIP_PEERS=1 to skip the conformance run)" >&2
    exit 1
}

# The suite and its Node 22, both pinned in tests/peers.
[ -f "$SUITE_JS" ] || die "the conformance suite is not installed ($SUITE_JS is missing): run \`npm ci\` in $PEERS"
[ -x "$NODE_BIN/node" ] || die "the pinned Node runtime is not installed ($NODE_BIN/node is missing): run \`npm ci\` in $PEERS"
PATH="$PWD/$NODE_BIN:$PATH"
export PATH
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 22 ] || die "the suite needs Node 22 or newer, $NODE_BIN/node is $(node --version)"

# A loopback-only network namespace.
command -v unshare >/dev/null || die "\`unshare\` is missing (util-linux): the suite's servers must run in a loopback-only network namespace"
command -v ip >/dev/null || die "\`ip\` is missing (iproute2): it brings loopback up in the namespace"
unshare -n sh -c 'ip link set lo up' 2>/dev/null ||
    die "\`unshare -n\` does not work here (it needs root or user namespaces): the suite's servers must not run outside a loopback-only namespace"
lo_only() {
    unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$@"
}

# The client under test.
if [ -n "${MCPWIRE_CONFORMANCE_CLIENT:-}" ]; then
    client=$MCPWIRE_CONFORMANCE_CLIENT
else
    echo "conformance: building conformance-client"
    client=$(cargo build -p mcpwire-tests --bin conformance-client --locked --message-format=json-render-diagnostics |
        sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1) ||
        die "building conformance-client failed"
fi
[ -n "$client" ] && [ -x "$client" ] || die "the conformance client binary was not found (${client:-nothing built})"
case $client in
/*) ;;
*) client=$PWD/$client ;;
esac
# The suite runs `sh -c "<command> <url>"`.
command_line=$(printf '%q' "$client")

passed=0
failed=0
for scenario in "${SCENARIOS[@]}"; do
    start=$(date +%s%N)
    status=0
    output=$(lo_only timeout $((TIMEOUT_MS / 1000 + 60)) \
        node "$SUITE_JS" client --command "$command_line" --scenario "$scenario" --timeout "$TIMEOUT_MS" 2>&1) ||
        status=$?
    output=$(printf '%s\n' "$output" | sed 's/\x1b\[[0-9;]*m//g')
    elapsed=$((($(date +%s%N) - start) / 1000000))
    seconds=$(printf '%d.%01d s' $((elapsed / 1000)) $((elapsed % 1000 / 100)))
    counts=$(printf '%s\n' "$output" | sed -n 's/^Passed: \([0-9]*\/[0-9]*\), \([0-9]*\) failed, \([0-9]*\) warnings.*/\1 checks, \2 failed, \3 warnings/p' | tail -n 1)
    if [ "$status" -eq 0 ] && printf '%s\n' "$output" | grep -q 'OVERALL: PASSED'; then
        passed=$((passed + 1))
        echo "PASS $scenario: ${counts:-no check counts} ($seconds)"
    else
        failed=$((failed + 1))
        echo "FAIL $scenario: ${counts:-no results}, exit $status ($seconds)"
        printf '%s\n' "$output" | sed 's/^/    /'
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
