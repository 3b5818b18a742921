#!/usr/bin/env bash
# Type-checks mcpwire where the tests do not run it: at the MSRV on Linux, and for Windows and
# macOS. Called by .ci/test; also runs on its own from the repository root (docs/architecture.md: "Platforms").
#
#   .ci/platforms.sh            the test command's checks, with Rust 1.85 (the MSRV):
#                                 the workspace's libraries and binaries on Linux;
#                                 mcpwire-core, mcpwire and mcpwire-cli for x86_64-pc-windows-msvc
#                                 and aarch64-apple-darwin, default features.
#   .ci/platforms.sh --all      also x86_64-pc-windows-gnu and x86_64-apple-darwin, each target
#                               (Linux too) with --all-features, and clippy (-D warnings, all
#                               features) for each.
#   .ci/platforms.sh [--all] TARGET...   the same for the targets named.
#
# Environment:
#   MCPWIRE_PLATFORMS_RUST=1.96    check with the other Rust series Debian 12 ships (default 1.85).
#   MCPWIRE_TOOLCHAINS=DIR         where the toolchains are kept (default: the user's cache folder,
#                                  ${XDG_CACHE_HOME:-~/.cache}/mcpwire-ci/toolchains).
#   MCPWIRE_SKIP_PLATFORMS=1       skip (say so and exit 0) instead of failing where the toolchain
#                                  cannot be had (no Debian 12 package archive).
#
# The toolchain: Debian 12's signed `rustc-web` packages (the official Rust release sources, built
# by Debian), unpacked into the cache folder (.ci/debian.sh). Their `rust-web-src` lets
# `-Zbuild-std` build the standard library of any target, so no Windows or macOS SDK is needed:
# a check links nothing, and cargo's `links` overrides stand in for the build scripts of the C
# -sys crates. The builds go to target/platforms/ (or under $CARGO_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/debian.sh

ALL=0
TARGETS=()
for arg in "$@"; do
  case $arg in
    --all) ALL=1 ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    -*) echo "platforms: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) TARGETS+=("$arg") ;;
  esac
done
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(x86_64-pc-windows-msvc aarch64-apple-darwin)
  [ $ALL = 1 ] && TARGETS+=(x86_64-pc-windows-gnu x86_64-apple-darwin)
fi
SERIES=${MCPWIRE_PLATFORMS_RUST:-1.85}
HOST=x86_64-unknown-linux-gnu

rust_toolchain MCPWIRE_SKIP_PLATFORMS "$SERIES"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}/platforms/$SERIES
export CARGO_INCREMENTAL=0
mkdir -p "$CARGO_TARGET_DIR"
OV=$CARGO_TARGET_DIR/sys-overrides.toml
sys_overrides "$OV" "$HOST" "${TARGETS[@]}"

failed=()
run() {
  local what=$1; shift
  echo "== platforms: $what"
  if "$@"; then echo "== platforms: $what: passes"; else failed+=("$what"); fi
}
# Warnings fail a check as they fail clippy in the test command (the dependencies' lints, the
# standard library's included, are capped by cargo).
common=(--locked --keep-going --config "$OV" --config 'build.rustflags = ["-D", "warnings"]')
cross=(-Zbuild-std=std,panic_abort -p mcpwire-core -p mcpwire -p mcpwire-cli)

run "$SERIES: the workspace's libraries and binaries on $HOST" \
  cargo check "${common[@]}" --workspace --lib --bins
if [ $ALL = 1 ]; then
  run "$SERIES: $HOST, all features" cargo check "${common[@]}" --workspace --lib --bins --all-features
  run "$SERIES: $HOST, clippy" cargo clippy "${common[@]}" --workspace --lib --bins --all-features
fi
for t in "${TARGETS[@]}"; do
  run "$SERIES: $t" cargo check "${common[@]}" "${cross[@]}" --target "$t"
  if [ $ALL = 1 ]; then
    run "$SERIES: $t, all features" cargo check "${common[@]}" "${cross[@]}" --target "$t" --all-features
    run "$SERIES: $t, clippy" cargo clippy "${common[@]}" "${cross[@]}" --target "$t" --all-features
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  printf 'platforms: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "platforms: all checks pass"
