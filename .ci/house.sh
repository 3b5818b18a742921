#!/usr/bin/env bash
# The house's checks: the rules the project keeps that no compiler keeps for it. One step of the
# test command (.ci/test); later checks of the same kind join here. Run from anywhere.
#
#   1. .ci/house.py: from the sources, no build (about 2 s): no import circles between the files
#      of a crate, no import of a crate's own root re-exports from inside it, no non-test file
#      over 800 lines, no folder over 12 `.rs` files (exceptions in its commented allowlist);
#      .ci/house_test.py first checks that each of its rules fires on a crate that breaks it.
#   2. .ci/features.sh: every feature set of the published crates compiles, clippy clean.
#   3. cargo doc with -D warnings: every doc link resolves, every public item is documented.
#
# Each check runs even when an earlier one failed; the script fails if any did, naming them.
#
#   .ci/house.sh                  the three
#   .ci/house.sh rules            only 1 (the test command runs it first: it fails fast)
#   .ci/house.sh features doc     only 2 and 3
set -uo pipefail
cd "$(dirname "$0")/.."

checks=("$@")
((${#checks[@]} > 0)) || checks=(rules features doc)
for c in "${checks[@]}"; do
  case $c in
    rules | features | doc) ;;
    *) echo "house: unknown check $c (rules, features or doc)"; exit 2 ;;
  esac
done
wants() { [[ " ${checks[*]} " == *" $1 "* ]]; }

step() { printf '\n== house: %s\n' "$*"; }
failed=()
started=$SECONDS

if wants rules; then
  step "the sources' rules (.ci/house.py)"
  python3 .ci/house_test.py || failed+=("house_test.py")
  python3 .ci/house.py || failed+=("house.py")
fi

if wants features; then
  step "the feature matrix (.ci/features.sh)"
  .ci/features.sh || failed+=("features.sh")
fi

if wants doc; then
  step "doc (cargo doc, -D warnings)"
  RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked || failed+=("cargo doc")
fi

echo
if ((${#failed[@]} > 0)); then
  echo "house: failed: ${failed[*]} ($((SECONDS - started)) s)"
  exit 1
fi
echo "house: ${checks[*]}: every check passed ($((SECONDS - started)) s)"
