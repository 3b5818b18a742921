#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/peers) against mcpwire's `conformance-client` for the client scenarios we support.
#
# Two versions of the suite are pinned side by side in tests/peers:
# - 0.1.16 (`@modelcontextprotocol/conformance`): the four scenarios below, the 19
#   authorization scenarios that are not extensions and the 3 that are, always run.
# - 0.2.0-alpha.12 (npm alias `conformance-next`): the 2025-11-25 scenarios again plus the
#   2026-07-28 ones, each run at an explicit `--spec-version` (the suite hands it to the client
#   as MCP_CONFORMANCE_PROTOCOL_VERSION), always run.
#
# Every authorization scenario also runs as a host meets a server, knowing no spec version:
# 0.1.16 names none; on 0.2.0-alpha.12 (which always names one, 2025-11-25 by default) the
# client is told to ignore it (MCPWIRE_CONFORMANCE_NO_VERSION=1): it detects the era and keeps
# its default authorization rules, deciding from what the wire shows.
#
# The suite's scenario servers listen on every interface, so the suite runs inside a network
# namespace that has only loopback (`unshare -n`, then `lo` up). Without `unshare` (or without
# the right to use it) the script fails rather than run them anywhere else.
#
# Prints one line per run (PASS/FAIL, checks passed, time; a failing run is followed by the
# suite's output, indented), then `N passed, N failed`. Exits 1 when any run fails. A run in
# which no check passed or failed (every check skipped, or the suite skipped the scenario at
# that spec version) is a failure.
#
# Environment:
#   MCPWIRE_CONFORMANCE_CLIENT  the client binary to test (default: build it with cargo)
#   MCPWIRE_SKIP_PEERS=1        skip (say so and exit 0) instead of failing when peers are missing
#   MCPWIRE_CONFORMANCE_TIMEOUT the suite's per-client timeout in ms (default 30000)
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)
# `<spec version> <scenario>`, run on 0.2.0-alpha.12.
NEXT_RUNS=(
    "2025-11-25 initialize"
    "2025-11-25 tools_call"
    "2025-11-25 elicitation-sep1034-client-defaults"
    "2025-11-25 sse-retry"
    "2025-11-25 json-schema-2020-12-preservation"
    "2026-07-28 tools_call"
    "2026-07-28 request-metadata"
    "2026-07-28 sep-2322-client-request-state"
    "2026-07-28 http-standard-headers"
    "2026-07-28 http-custom-headers"
    "2026-07-28 http-invalid-tool-headers"
    "2026-07-28 json-schema-ref-no-deref"
    "2026-07-28 json-schema-2020-12-preservation"
)
# Authorization: every auth scenario that is not an extension, on 0.1.16 as it tags them, and
# on 0.2.0-alpha.12 at each revision that requires it (14 at 2025-11-25, 25 at 2026-07-28) and
# the two 2025-03-26 back-compatibility scenarios.
AUTH_2025_11_25=(metadata-default metadata-var1 metadata-var2 metadata-var3 basic-cimd
    scope-from-www-authenticate scope-from-scopes-supported scope-omitted-when-undefined
    scope-step-up scope-retry-limit token-endpoint-auth-basic token-endpoint-auth-post
    token-endpoint-auth-none pre-registration)
AUTH_2026_07_28=("${AUTH_2025_11_25[@]}" resource-mismatch offline-access-scope
    offline-access-not-supported authorization-server-migration iss-supported iss-not-advertised
    iss-supported-missing iss-wrong-issuer iss-unexpected iss-normalized metadata-issuer-mismatch)
AUTH_BACKCOMPAT=(2025-03-26-oauth-metadata-backcompat 2025-03-26-oauth-endpoint-fallback)
AUTH_SCENARIOS=("${AUTH_2025_11_25[@]}" "${AUTH_BACKCOMPAT[@]}" resource-mismatch
    offline-access-scope offline-access-not-supported)
for s in "${AUTH_SCENARIOS[@]}"; do SCENARIOS+=("auth/$s"); done
for s in "${AUTH_2025_11_25[@]}"; do NEXT_RUNS+=("2025-11-25 auth/$s"); done
for s in "${AUTH_2026_07_28[@]}"; do NEXT_RUNS+=("2026-07-28 auth/$s"); done
for s in "${AUTH_BACKCOMPAT[@]}"; do NEXT_RUNS+=("2025-03-26 auth/$s"); done
# The authorization extensions (oauth.md §6): with no user (client credentials, enterprise-managed,
# workload identity) and DPoP-bound tokens; on 0.1.16 as it names them, and on 0.2.0-alpha.12 at
# both revisions. Extension scenarios are on no spec timeline, so 0.2.0 runs
# them at a spec version only when forced (FORCED_RUNS, `<spec version> <scenario>`).
SCENARIOS+=(auth/client-credentials-jwt auth/client-credentials-basic
    auth/cross-app-access-complete-flow)
AUTH_EXTENSIONS=(client-credentials-jwt client-credentials-basic enterprise-managed-authorization
    wif-jwt-bearer dpop dpop-nonce)
FORCED_RUNS=()
for s in "${AUTH_EXTENSIONS[@]}"; do
    FORCED_RUNS+=("2025-11-25 auth/$s" "2026-07-28 auth/$s")
done
# Every authorization scenario of 0.2.0-alpha.12 once more, the client knowing no version.
NO_VERSION_RUNS=()
for s in "${AUTH_2026_07_28[@]}" "${AUTH_BACKCOMPAT[@]}" "${AUTH_EXTENSIONS[@]}"; do
    NO_VERSION_RUNS+=("auth/$s")
done
# Skills (SEP-2640), an extension too: written against 2026-07-28; its scenario servers answer
# the handshake era as well, so both revisions.
for s in no-prefetch verify-digest verify-size verify-frontmatter; do
    FORCED_RUNS+=("2026-07-28 sep-2640-client-$s" "2025-11-25 sep-2640-client-$s")
done
PEERS=tests/peers
SUITE_JS=$PEERS/node_modules/@modelcontextprotocol/conformance/dist/index.js
NEXT_SUITE_JS=$PEERS/node_modules/conformance-next/dist/index.js
NEXT_SUITE_VERSION=0.2.0-alpha.12
NODE_BIN=$PEERS/node_modules/node/bin
TIMEOUT_MS=${MCPWIRE_CONFORMANCE_TIMEOUT:-30000}
NEXT=1

if [ "${MCPWIRE_SKIP_PEERS:-}" = 1 ]; then
    echo "conformance: skipped because MCPWIRE_SKIP_PEERS=1"
    exit 0
fi

die() {
    echo "conformance: $*" >&2
    echo "conformance: (set MCPWIRE_SKIP_PEERS=1 to skip the conformance run)" >&2
    exit 1
}

# The suites and their Node 22, all pinned in tests/peers.
[ -f "$SUITE_JS" ] || die "the conformance suite is not installed ($SUITE_JS is missing): run \`npm ci\` in $PEERS"
if [ "$NEXT" = 1 ]; then
    [ -f "$NEXT_SUITE_JS" ] ||
        die "the conformance suite $NEXT_SUITE_VERSION is not installed ($NEXT_SUITE_JS is missing): run \`npm ci\` in $PEERS"
fi
[ -x "$NODE_BIN/node" ] || die "the pinned Node runtime is not installed ($NODE_BIN/node is missing): run \`npm ci\` in $PEERS"
PATH="$PWD/$NODE_BIN:$PATH"
export PATH
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 22 ] || die "the suite needs Node 22 or newer, $NODE_BIN/node is $(node --version)"
if [ "$NEXT" = 1 ]; then
    next_version=$(node "$NEXT_SUITE_JS" --version)
    [ "$next_version" = "$NEXT_SUITE_VERSION" ] ||
        die "$NEXT_SUITE_JS is version $next_version, expected $NEXT_SUITE_VERSION: run \`npm ci\` in $PEERS"
fi

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
# The command of the current run (the client told no version for the runs that ask so).
run_command=$command_line

passed=0
failed=0
# run_scenario LABEL SUITE_JS SCENARIO [SUITE OPTION...]: one run, one line.
run_scenario() {
    local label=$1 suite=$2 scenario=$3
    shift 3
    local start status output elapsed seconds counts denominator
    start=$(date +%s%N)
    status=0
    output=$(lo_only timeout $((TIMEOUT_MS / 1000 + 60)) \
        node "$suite" client --command "$run_command" --scenario "$scenario" --timeout "$TIMEOUT_MS" "$@" 2>&1) ||
        status=$?
    output=$(printf '%s\n' "$output" | sed 's/\x1b\[[0-9;]*m//g')
    elapsed=$((($(date +%s%N) - start) / 1000000))
    seconds=$(printf '%d.%01d s' $((elapsed / 1000)) $((elapsed % 1000 / 100)))
    counts=$(printf '%s\n' "$output" | sed -n 's/^Passed: \([0-9]*\/[0-9]*\), \([0-9]*\) failed, \([0-9]*\) warnings.*/\1 checks, \2 failed, \3 warnings/p' | tail -n 1)
    # Checks that passed or failed; 0 when every check was skipped (or only informational).
    denominator=$(printf '%s\n' "$output" | sed -n 's/^Passed: [0-9]*\/\([0-9]*\),.*/\1/p' | tail -n 1)
    if [ "$status" -eq 0 ] && printf '%s\n' "$output" | grep -q 'OVERALL: PASSED' && [ "${denominator:-0}" -gt 0 ]; then
        passed=$((passed + 1))
        echo "PASS $label: ${counts:-no check counts} ($seconds)"
    else
        failed=$((failed + 1))
        if [ -n "$counts" ] && [ "${denominator:-0}" -eq 0 ]; then
            counts="$counts, every check skipped"
        fi
        echo "FAIL $label: ${counts:-no results}, exit $status ($seconds)"
        printf '%s\n' "$output" | sed 's/^/    /'
    fi
}

for scenario in "${SCENARIOS[@]}"; do
    run_scenario "$scenario" "$SUITE_JS" "$scenario"
done

# The same scenarios with the client's connection on tokio (mcpwire's own HTTP client on
# tokio's sockets, timers and name lookup).
run_command="env MCPWIRE_TEST_RUNTIME=tokio $command_line"
for scenario in "${SCENARIOS[@]}"; do
    run_scenario "$scenario (tokio)" "$SUITE_JS" "$scenario"
done
run_command=$command_line

if [ "$NEXT" = 1 ]; then
    for run in "${NEXT_RUNS[@]}"; do
        spec=${run%% *}
        scenario=${run#* }
        run_scenario "$scenario ($NEXT_SUITE_VERSION, spec $spec)" "$NEXT_SUITE_JS" "$scenario" --spec-version "$spec"
    done
fi

if [ "$NEXT" = 1 ]; then
    for run in "${FORCED_RUNS[@]}"; do
        spec=${run%% *}
        scenario=${run#* }
        run_scenario "$scenario ($NEXT_SUITE_VERSION, spec $spec)" "$NEXT_SUITE_JS" "$scenario" --spec-version "$spec" --force
    done
fi

if [ "$NEXT" = 1 ]; then
    run_command="env MCPWIRE_CONFORMANCE_NO_VERSION=1 $command_line"
    for scenario in "${NO_VERSION_RUNS[@]}"; do
        run_scenario "$scenario ($NEXT_SUITE_VERSION, no version known)" "$NEXT_SUITE_JS" "$scenario"
    done
    run_command=$command_line
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
