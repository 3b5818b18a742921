#!/usr/bin/env bash
# Installs the pinned Python MCP peer (python-requirements.txt) into tests/peers/pyvenv.
# Idempotent: creates the venv only when missing, and pip leaves already-satisfied pins alone.
# Quiet on success (one summary line); on failure pip's output is shown and the script exits non-zero.
set -euo pipefail
cd "$(dirname "$0")"

venv=pyvenv
reqs=python-requirements.txt
python=${PYTHON:-python3}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

fail() {
    echo "install-python.sh: $*" >&2
    cat "$log" >&2
    exit 1
}

created=""
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" >"$log" 2>&1 || fail "'$python -m venv $venv' failed"
    created="created $venv, "
fi

# Skip pip entirely when the venv already holds exactly the pinned set.
if [ -z "$created" ] && [ -f "$venv/.installed-requirements" ] && cmp -s "$reqs" "$venv/.installed-requirements"; then
    echo "python peer: $venv already up to date ($(grep -c '==' "$reqs") pinned packages)"
    exit 0
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --require-virtualenv -r "$reqs" >"$log" 2>&1 || fail "pip install -r $reqs failed"
"$venv/bin/python" -c "import mcp.server" >"$log" 2>&1 || fail "the venv cannot import mcp.server"
cp "$reqs" "$venv/.installed-requirements"

echo "python peer: ${created}installed $(grep -c '==' "$reqs") pinned packages into $venv ($("$venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))'))"
