#!/usr/bin/env bash
# The fuzz smoke test (docs/architecture.md: "Fuzzing"): installs the pinned cargo-fuzz if it is missing,
# builds every fuzz target, then runs each one for a few seconds on its seed corpus
# (`fuzz/seeds/<target>/`). Any crash, leak, timeout or out-of-memory fails the run.
#
#   fuzz/smoke.sh                 every target, MCPWIRE_FUZZ_SECONDS (default 5) each
#   fuzz/smoke.sh sse http1       only these targets
#   MCPWIRE_FUZZ_SECONDS=600 fuzz/smoke.sh jsonl   the ten-minute run of one target
#
# The seeds are only read: what the fuzzer finds goes to a scratch corpus, removed at the end,
# so a run never changes the repository. The input of a crash is kept where cargo-fuzz keeps
# it, `fuzz/artifacts/<target>/` (ignored by git), and the command that replays it is printed.
set -euo pipefail
cd "$(dirname "$0")"

# The cargo-fuzz release this script was checked with.
CARGO_FUZZ_VERSION=0.13.2
seconds="${MCPWIRE_FUZZ_SECONDS:-5}"
# cargo-fuzz passes nightly-only compiler flags; on a stable toolchain this enables them.
export RUSTC_BOOTSTRAP=1

step() { printf '\n== %s\n' "$*"; }

step "cargo-fuzz"
if ! installed="$(cargo fuzz --version 2>/dev/null)"; then
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
  installed="$(cargo fuzz --version)"
elif [[ "$installed" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]]; then
  echo "note: $installed is installed; this script was checked with $CARGO_FUZZ_VERSION"
fi
echo "$installed"

if (($# > 0)); then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list)
fi
((${#targets[@]} > 0)) || { echo "no fuzz targets found"; exit 1; }

step "build (${targets[*]})"
if (($# > 0)); then
  for target in "${targets[@]}"; do cargo fuzz build "$target"; done
else
  cargo fuzz build
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

failed=()
for target in "${targets[@]}"; do
  step "run $target for ${seconds}s on fuzz/seeds/$target"
  seeds="seeds/$target"
  if [[ ! -d "$seeds" ]] || [[ -z "$(ls -A "$seeds")" ]]; then
    echo "FAIL: no seed corpus in fuzz/$seeds"
    failed+=("$target (no seeds)")
    continue
  fi
  corpus="$scratch/$target"
  mkdir -p "$corpus"
  log="$scratch/$target.log"
  # The first directory is the one libFuzzer adds new inputs to; the seeds are only read.
  if cargo fuzz run "$target" "$corpus" "$seeds" -- -max_total_time="$seconds" >"$log" 2>&1; then
    grep -E '^Done [0-9]+ runs' "$log" || tail -n 3 "$log"
  else
    # The panic (or sanitizer report) without its stack, then libFuzzer's own ending.
    grep -E -A4 "panicked at|^==[0-9]+==ERROR|^ERROR: libFuzzer" "$log" | grep -vE '^ +#?[0-9]+[: ]' || true
    grep -E -A2 "^(Failing input|Reproduce with):" "$log" || tail -n 20 "$log"
    echo
    echo "FAIL: fuzz target $target crashed (see above); its input is kept in fuzz/artifacts/$target/."
    echo "Replay it with: cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run $target artifacts/$target/<file>"
    failed+=("$target")
  fi
done

echo
if ((${#failed[@]} > 0)); then
  echo "fuzz smoke test FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz smoke test: ${#targets[@]} targets ran ${seconds}s each, no crash"
