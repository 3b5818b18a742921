#!/usr/bin/env bash
# The feature matrix: every feature set a user of the published crates may choose compiles and is
# clippy clean. For `mcpwire-core`, `mcpwire` and `mcpwire-cli`: no default features, the default
# ones, each feature alone, and all features (cargo-hack's `--each-feature`). A check, not a build:
# clippy type-checks each set with `-D warnings`, so nothing is linked or run.
#
#   .ci/features.sh               the three crates
#   .ci/features.sh mcpwire       only this one
#
# Installs the pinned cargo-hack when it is missing or at another version. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

# The cargo-hack release this script was checked with.
CARGO_HACK_VERSION=0.6.46

step() { printf '\n== %s\n' "$*"; }

step "cargo-hack"
installed="$(cargo hack --version 2>/dev/null || true)"
if [[ "$installed" != "cargo-hack $CARGO_HACK_VERSION" ]]; then
  cargo install --locked cargo-hack --version "$CARGO_HACK_VERSION"
  installed="$(cargo hack --version)"
fi
echo "$installed"

if (($# > 0)); then
  crates=("$@")
else
  crates=(mcpwire-core mcpwire mcpwire-cli)
fi

for crate in "${crates[@]}"; do
  step "features of $crate: none, default, each alone, all (clippy -D warnings)"
  cargo hack clippy --package "$crate" --each-feature --locked -- -D warnings
done

echo
echo "every feature set of ${crates[*]} compiles, clippy clean"
