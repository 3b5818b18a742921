#!/usr/bin/env bash
# Builds every program in adapters/examples and runs each the way its doc comment says, with a
# timeout, against the demo server (`mcpwire serve-demo`, the command line built here, put first
# on PATH as an installed one would be) or a local peer (http_bearer, http_oauth and tokio_host's
# second run: the Python peers on 127.0.0.1); then runs the README's command-line tour, line by line. Called by
# .ci/test; runs on its own from the repository root once the peers are installed.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$PWD/$target"
# The workspace's examples and binaries, its features unified as in `cargo build --workspace
# --all-targets` (mcpwire-tests turns on demo, libcurl, tokio and opentelemetry, every example's
# required features): after that build (the test command's), nothing is compiled again.
cargo build --locked --workspace --examples --bins
export PATH="$target/debug:$PATH"
examples="$target/debug/examples"
seconds="${MCPWIRE_EXAMPLE_SECONDS:-60}"

# Runs one program with the timeout; its output must hold each of the given words.
run() {
  local name="$1"; shift
  local words=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do words+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  local out
  if ! out="$(timeout "$seconds" "$@" 2>&1)"; then
    printf '%s\n' "$out"; echo "$name: failed (exit or timeout after ${seconds}s)"; exit 1
  fi
  for w in "${words[@]}"; do
    grep -qF -- "$w" <<<"$out" || { printf '%s\n' "$out"; echo "$name: printed no \"$w\""; exit 1; }
  done
  echo "$name: ok"
}

run quickstart "2 + 40 = 42" -- "$examples/quickstart"
run handlers "ask: hello, Ada" "you said: hello" "roots: file:///home/ada/project" -- "$examples/handlers"
run core_loop "2 + 40 = 42" "closed" -- "$examples/core_loop"
# A host with tracing-opentelemetry: the traceparent the demo server received is the call's span.
run otel 'span "tools/call add" (Client)' "the server's parent is the call's client span: true" \
  "mcp.client.operation.duration: 1 measure(s)" "mcp.client.session.duration: 1 measure(s)" -- "$examples/otel"
run many_servers "demo: ready" "old: ready" "old__add: 42" -- "$examples/many_servers"
# What tokio_host prints on any run: each step of a tokio host's session with the demo server.
tokio_words=("demo__add: 2 + 40 = 42" "progress: 3 of 3" "slow: done after 3 steps" "timed out: true"
  "ask: hello, Ada" "cancelled from another task: true, notifications/cancelled sent: true"
  "after the cancel: 1 + 1 = 2" "demo: closed")
run tokio_host "${tokio_words[@]}" -- "$examples/tokio_host"

# The HTTP examples against the Python peers on free loopback ports: http_bearer against the
# Python SDK server, http_oauth against the OAuth test server (it approves every sign-in).
python="tests/peers/pyvenv/bin/python"
[[ -x "$python" ]] || { echo "the HTTP examples need the Python peers: tests/peers/install-python.sh"; exit 1; }
servers=()
trap 'for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
# Starts a peer on a free port (its arguments, then --port N) and waits until it listens.
start_peer() {
  port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$python" "$@" --port "$port" >/dev/null 2>&1 &
  servers+=("$!")
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "the peer $* did not listen on port $port"; exit 1
}
no_proxy=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u all_proxy)

start_peer tests/peers/py_server.py http
MCP_TOKEN=example-token run http_bearer "tool: add" "transport:" -- \
  "${no_proxy[@]}" "$examples/http_bearer" "http://127.0.0.1:$port/mcp"
# tokio_host with the Python SDK server over HTTP beside the demo over stdio: one namespace.
run "tokio_host (stdio and HTTP)" "${tokio_words[@]}" "tool: web__add" "web__add: 2 + 40 = 42" \
  "web: closed" -- "${no_proxy[@]}" "$examples/tokio_host" "http://127.0.0.1:$port/mcp"
start_peer tests/peers/py_oauth_server.py
run http_oauth "sign in at http://127.0.0.1:$port/" "whoami: signed in" -- \
  "${no_proxy[@]}" "$examples/http_oauth" "http://127.0.0.1:$port/mcp"
for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
trap - EXIT

# The README's command-line tour: each line of its sh blocks that runs mcpwire.
awk '/^```sh$/{on=1; next} /^```$/{on=0} on && /^mcpwire /' README.md | while IFS= read -r line; do
  run "README: $line" -- bash -c "$line" </dev/null
done
