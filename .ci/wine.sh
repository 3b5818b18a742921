#!/usr/bin/env bash
# Opt-in (not part of .ci/test): mcpwire's process-tree and stdio tests and the Manager's tests
# built for x86_64-pc-windows-gnu with mingw-w64 and run under Wine, on a Debian 12 x86_64
# machine (docs/architecture.md: "Platforms"). Nothing is installed system-wide: Debian's rustc-web 1.85, mingw-w64 and
# Wine 8 are unpacked into the cache folder (.ci/debian.sh), Wine's prefix made there too.
#
#   .ci/wine.sh                      the three test files
#   .ci/wine.sh tree|stdio|manager   one of them
#   .ci/wine.sh stdio -- FILTER      arguments after -- go to the test binary
#
# Environment: MCPWIRE_TOOLCHAINS (see .ci/debian.sh); MCPWIRE_SKIP_WINE=1 to skip where the
# packages cannot be had. The builds go to target/wine/ (or under $CARGO_TARGET_DIR).
#
# What Wine is not: Windows. A test that starts a Unix program (python3, sh, node: the fault
# server, the peers) cannot start it there and fails; the script reports every test's result
# and fails if a test that .ci/wine-expected.txt lists did not pass.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/debian.sh
SKIP=MCPWIRE_SKIP_WINE

WHICH=(tree stdio manager)
ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    tree | stdio | manager) WHICH=("$1") ;;
    --) shift; ARGS=("$@"); break ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "wine: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

rust_toolchain $SKIP 1.85
W=$CACHE/wine-8
debian_unpack $SKIP "$W" wine64 libwine wine libz-mingw-w64 libunwind8 \
  gcc-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix-runtime gcc-mingw-w64-base \
  mingw-w64-x86-64-dev mingw-w64-common binutils-mingw-w64-x86-64
# Debian's wineserver wrapper names the server by its installed path: the unpacked one instead.
sed -i 's|^wineserver\(32\|64\)=.*|wineserver\1="$(dirname "$0")/wineserver\1"|' \
  "$W/usr/lib/wine/wineserver"

export WINEPREFIX=$CACHE/wine-prefix WINEDEBUG=-all
export WINEDLLPATH=$W/usr/lib/x86_64-linux-gnu/wine
export LD_LIBRARY_PATH=$W/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
WINE=$W/usr/lib/wine/wine64
# mingw's runtime DLLs (libgcc, winpthread), found by the test programs through Wine's PATH.
gcc_dir=$(ls -d "$W"/usr/lib/gcc/x86_64-w64-mingw32/*-posix | head -n 1)
export WINEPATH="Z:${gcc_dir//\//\\};Z:${W//\//\\}\\usr\\x86_64-w64-mingw32\\lib"
sys32=$WINEPREFIX/drive_c/windows/system32
if [ ! -e "$sys32/bcryptprimitives.dll" ]; then
  echo "wine: making the prefix in $WINEPREFIX"
  "$WINE" wineboot --init >/dev/null 2>&1 || true
  # Wine's own user32 needs zlib, which Debian builds apart (libz-mingw-w64).
  cp "$W/usr/x86_64-w64-mingw32/lib/zlib1.dll" "$sys32/"
  # Rust's standard library takes its random bytes from ProcessPrng (bcryptprimitives.dll,
  # Windows 10 and later), which Wine 8 lacks: a stand-in over RtlGenRandom.
  cat >"$WINEPREFIX/prng.c" <<'C'
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG n = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, n)) return FALSE;
    data += n;
    length -= n;
  }
  return TRUE;
}
C
  "$W/usr/bin/x86_64-w64-mingw32-gcc-posix" -shared -O2 -o "$sys32/bcryptprimitives.dll" \
    "$WINEPREFIX/prng.c" -ladvapi32
fi
"$WINE" cmd /c ver | tr -d '\r' | grep -v '^$'

T=x86_64-pc-windows-gnu
t=${T//-/_}
# The runtime start and end objects rustc puts around every Windows GNU program: rustup's
# standard library ships them, -Zbuild-std does not build them.
rt=$TC/usr/lib/rustlib/$T/lib
for o in rsbegin rsend; do
  if [ ! -e "$rt/$o.o" ]; then
    mkdir -p "$rt"
    rustc --target "$T" --emit=obj -C panic=abort -C opt-level=2 -o "$rt/$o.o" \
      "$TC/usr/lib/rustlib/src/rust/library/rtstartup/$o.rs"
  fi
done
gcc=$W/usr/bin/x86_64-w64-mingw32-gcc-posix
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}/wine
export CARGO_INCREMENTAL=0
export "CARGO_TARGET_${t^^}_LINKER=$gcc" "CC_$t=$gcc" "AR_$t=$W/usr/bin/x86_64-w64-mingw32-ar"
export "CARGO_TARGET_${t^^}_RUNNER=$WINE"
# The test programs run on Windows, the shell's helpers on Linux: the build scripts and cargo
# are Linux programs; only the test binaries go through Wine.
build=(--locked --target "$T" -Zbuild-std)

status=0
for which in "${WHICH[@]}"; do
  case $which in
    tree) pkg=(-p mcpwire --features demo --test tree) ;;
    stdio) pkg=(-p mcpwire --features demo --test stdio) ;;
    manager) pkg=(-p mcpwire-tests --test manager) ;;
  esac
  echo "== wine: $which"
  log=$CARGO_TARGET_DIR/$which.log
  mkdir -p "$CARGO_TARGET_DIR"
  if ! cargo test "${build[@]}" "${pkg[@]}" --no-run; then
    echo "== wine: $which: does not build" >&2
    status=1
    continue
  fi
  set +e
  cargo test "${build[@]}" "${pkg[@]}" -- --test-threads 1 "${ARGS[@]}" 2>&1 | tr -d '\r' | tee "$log"
  set -e
  grep -E '^test .* \.\.\. (ok|FAILED)$' "$log" >"$log.results" || true
  echo "== wine: $which: $(grep -E '^test result:' "$log" | tail -n 1)"
  # The tests that need only Windows (the demo server is a Windows program here) must pass.
  while read -r name; do
    [ -z "$name" ] && continue
    if ! grep -qx "test $name ... ok" "$log.results"; then
      echo "== wine: $which: $name was expected to pass" >&2
      status=1
    fi
  done < <(sed -n "s/^$which: //p" .ci/wine-expected.txt)
done
exit $status
