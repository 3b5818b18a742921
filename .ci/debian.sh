# Sourced by .ci/platforms.sh and .ci/wine.sh: Debian 12 (bookworm) packages, downloaded with
# `apt-get download` and unpacked into a cache folder once; nothing is installed system-wide.
#
#   MCPWIRE_TOOLCHAINS=DIR   the cache folder (default: the user's cache folder,
#                            ${XDG_CACHE_HOME:-~/.cache}/mcpwire-ci/toolchains)

CACHE=${MCPWIRE_TOOLCHAINS:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpwire-ci/toolchains}

# unavailable SKIP_VARIABLE REASON: fails (or, with SKIP_VARIABLE=1, says so and exits 0).
unavailable() {
  local skip=$1; shift
  if [ "${!skip:-}" = 1 ]; then
    echo "${0##*/}: skipped because $skip=1 ($*)"
    exit 0
  fi
  echo "${0##*/}: $* (set $skip=1 to skip)" >&2
  exit 1
}

# debian_unpack SKIP_VARIABLE DIR PACKAGE...: the packages unpacked into DIR, downloaded the
# first time (a PACKAGE may be NAME=VERSION, with * in VERSION).
debian_unpack() {
  local skip=$1 dir=$2; shift 2
  [ -e "$dir/.unpacked" ] && return 0
  [ "$(uname -m)" = x86_64 ] || unavailable "$skip" "the packages used are for x86_64 Linux"
  command -v apt-get >/dev/null || unavailable "$skip" "no apt-get to download Debian 12's packages"
  # The package lists, once: apt-get needs them to download (as root; else they must be there).
  if [ -z "${DEBIAN_LISTS_UPDATED:-}" ] && [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_LISTS_UPDATED=1
  fi
  local debs
  debs=$(mktemp -d "${TMPDIR:-/tmp}/mcpwire-debs.XXXXXX")
  echo "${0##*/}: downloading ${*%%=*} into $dir"
  if ! (cd "$debs" && apt-get download -q "$@" >apt.log 2>&1); then
    cat "$debs/apt.log" >&2
    rm -rf "$debs"
    unavailable "$skip" "cannot download $* (a Debian 12 package archive is needed)"
  fi
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$dir.partial"; done
  rm -rf "$debs" "$dir"
  touch "$dir.partial/.unpacked"
  mv "$dir.partial" "$dir"
}

# rust_toolchain SKIP_VARIABLE SERIES: Debian's signed rustc-web of SERIES (1.85 or 1.96: the
# official Rust release sources, built by Debian), with clippy, the standard library's sources
# for -Zbuild-std, and mingw's dlltool (the standard library for windows-gnu needs it); exports
# PATH, RUSTC, CARGO and the rest so that `cargo` is that toolchain's. Sets TC (its folder).
rust_toolchain() {
  local skip=$1 series=$2 extra
  case $series in
    1.85) extra=(libstd-rust-web-1.85 libllvm19 libpcre3) ;;
    1.96) extra=(libstd-rust-web-1.96 libllvm22) ;;
    *) echo "${0##*/}: Rust $series: only 1.85 and 1.96 are known" >&2; exit 2 ;;
  esac
  TC=$CACHE/rust-$series
  debian_unpack "$skip" "$TC" \
    "rustc-web=$series.*" "cargo-web=$series.*" "libstd-rust-web-dev=$series.*" \
    "rust-web-src=$series.*" "rust-web-clippy=$series.*" "${extra[@]}" \
    libgit2-1.5 libmbedtls14 libmbedx509-1 libmbedcrypto7 libhttp-parser2.9 \
    binutils-mingw-w64-x86-64
  export PATH=$TC/usr/bin:$PATH
  export LD_LIBRARY_PATH=$TC/usr/lib/x86_64-linux-gnu:$TC/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export RUSTC=$TC/usr/bin/rustc CARGO=$TC/usr/bin/cargo RUSTDOC=$TC/usr/bin/rustdoc
  export CLIPPY_DRIVER=$TC/usr/bin/clippy-driver
  # -Zbuild-std on a stable compiler.
  export RUSTC_BOOTSTRAP=1
  unset RUSTC_WRAPPER RUSTUP_TOOLCHAIN
  local version
  version=$("$RUSTC" -V)
  echo "${0##*/}: $version"
  case $version in
    "rustc $series."*) ;;
    *) echo "${0##*/}: expected rustc $series" >&2; exit 1 ;;
  esac
}

# sys_overrides FILE TARGET...: cargo's `links` overrides that stand in for the build scripts of
# the C -sys crates (aws-lc-sys, curl-sys, libnghttp2-sys, libz-sys) on each TARGET: what they
# give on Linux. A check links nothing, so no C cross-compiler or SDK is needed.
sys_overrides() {
  local file=$1; shift
  cargo metadata --format-version 1 --locked | python3 -c '
import json, sys
links = {p["name"]: p["links"] for p in json.load(sys.stdin)["packages"] if p.get("links")}
fixed = {
    "aws-lc-sys": "rustc-cfg = [\"universal\"]\n",
    "curl-sys": "rustc-cfg = [\"libcurl_vendored\", \"link_libnghttp2\", \"link_libz\"]\nstatic = \"1\"\n",
    "libnghttp2-sys": "",
    "libz-sys": "",
}
for t in sys.argv[1:]:
    for name, body in fixed.items():
        print(f"[target.{t}.{links[name]}]\n{body}include = \"/nonexistent/include\"\nroot = \"/nonexistent\"")
' "$@" >"$file"
}
