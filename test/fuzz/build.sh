#!/usr/bin/env bash
# Builds the libFuzzer targets of native/fuzz/ with clang from Debian's
# packages, under ASan + UBSan, linking only the pure C++ decoding cores: no
# Node and no N-API (cores include common/format_error.h, never napi.h).
# Installs clang and the libFuzzer/sanitizer runtimes itself when they are
# missing (CI starts from a fresh machine, as root).
#
#   test/fuzz/build.sh [target ...]     default: every target whose sources exist
# Binaries land in test/fuzz/out/<target>.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=test/fuzz/out
mkdir -p "$out"

# target -> the core sources it links (globs under native/; N-API glue is
# skipped), besides native/common. A target is built once its harness and
# core are both on the branch, so harnesses can land before their cores.
declare -A cores=(
  [leb128]="varint/*.cc"
  [svb]="svb/*.cc"
  [svb_kernels]="svb/*.cc"
  [pctable]="pctable/*.cc"
  [tachyon_reader]="tachyon/read/*.cc platform/file_posix.cc"
  [tachyon_recover]="tachyon/read/*.cc platform/file_posix.cc"
  [tachyon_v2]="tachyon/v2/*.cc varint/*.cc"
  [tachyon_v2_region]="tachyon/v2/*.cc varint/*.cc"
  [tachyon_heap]="tachyon/v2/*.cc varint/*.cc"
)

# target -> sources that only make the target's inputs and are fuzzed by another
# target (tachyon_v2 round-trips the block encoder): built at -O2 under ASan,
# without coverage, so libFuzzer spends neither time nor feedback on them.
declare -A helpers=(
  [tachyon_v2_region]="tachyon/v2/block_encoder.cc"
)

CXX=${CXX:-clang++}
probe_toolchain() {
  local dir
  dir=$(mktemp -d)
  printf '%s\n' '#include <cstdint>' '#include <cstddef>' \
    'extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }' >"$dir/p.cc"
  "$CXX" -fsanitize=fuzzer,address,undefined "$dir/p.cc" -o "$dir/p" >/dev/null 2>&1
  local rc=$?
  rm -rf "$dir"
  return $rc
}
if ! command -v "$CXX" >/dev/null 2>&1 || ! probe_toolchain; then
  echo "fuzz: installing clang and its libFuzzer/sanitizer runtimes (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # Debian 12: clang 14; libFuzzer, ASan and UBSan runtimes are in libclang-rt-14-dev.
  $sudo_cmd apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
  CXX=clang++
  probe_toolchain || { echo "fuzz: clang cannot link -fsanitize=fuzzer,address,undefined" >&2; exit 1; }
fi
# The tachyon_reader harness decompresses zstd regions with libzstd (the addon gets them from zstd-napi).
if ! echo '#include <zstd.h>' | "$CXX" -E -x c++ - >/dev/null 2>&1; then
  echo "fuzz: installing libzstd-dev (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends libzstd-dev >/dev/null
fi

# _GLIBCXX_SANITIZE_VECTOR: libstdc++ marks a vector's spare capacity for ASan,
# so a harness that reuses buffers still gets a report for a read past size().
common=(-std=c++17 -g -fno-omit-frame-pointer -fexceptions -fno-sanitize-recover=all
  -D_GLIBCXX_SANITIZE_VECTOR=1 -DPROFPACK_FUZZ=1 -I native)
flags=("${common[@]}" -O1 -fsanitize=fuzzer,address,undefined)
helper_flags=("${common[@]}" -O2 -fsanitize=address)

LIST_ONLY=0
if [ "${1:-}" = --list ]; then LIST_ONLY=1; shift; fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for t in "${!cores[@]}"; do
    [ -f "native/fuzz/${t}_fuzz.cc" ] || continue
    # A harness can land before its core reaches this branch: build it once the core is here.
    ok=1
    for glob in ${cores[$t]}; do compgen -G "native/$glob" >/dev/null || ok=0; done
    if [ $ok -eq 1 ]; then targets+=("$t"); else echo "fuzz: skipping $t: native/${cores[$t]} is not on this branch yet" >&2; fi
  done
fi
IFS=$'\n' targets=($(sort <<<"${targets[*]}")); unset IFS
# --list: the targets a build with no names would build, one a line (test/fuzz/smoke.sh builds them two at a time).
if [ "${LIST_ONLY:-0}" = 1 ]; then printf '%s\n' "${targets[@]}"; exit 0; fi

for t in "${targets[@]}"; do
  srcs=("native/fuzz/${t}_fuzz.cc")
  # The cores: every .cc of common/ and the target's folders that is not N-API glue.
  helper_objs=()
  for f in ${helpers[$t]:-}; do
    mkdir -p "$out/obj/$t"
    helper_objs+=("$out/obj/$t/$(basename "$f" .cc).o")
    "$CXX" "${helper_flags[@]}" -c "native/$f" -o "${helper_objs[-1]}"
  done
  for glob in "common/*.cc" ${cores[$t]}; do
    for f in native/$glob; do
      [ -e "$f" ] || continue
      case "$f" in *_napi.cc) continue ;; esac
      case " ${helpers[$t]:-} " in *" ${f#native/} "*) continue ;; esac
      grep -qE '#include *[<"]napi\.h[>"]' "$f" && continue
      srcs+=("$f")
    done
  done
  # A core that includes common/errors.h (the N-API side of errors) still
  # compiles here with Node's headers on the include path; nothing N-API links.
  napi_flags=()
  core_files=$(for glob in ${cores[$t]}; do ls native/$(dirname "$glob")/*.h native/$glob 2>/dev/null | grep -v '_napi\.cc$'; done)
  if [ -n "$core_files" ] && grep -l 'common/errors.h' $core_files >/dev/null 2>&1; then
    echo "fuzz: warning: $(grep -l 'common/errors.h' $core_files | tr '\n' ' ')include common/errors.h (N-API); use common/format_error.h" >&2
    napi_inc=$(node -p "require('node-addon-api').include_dir")
    node_inc="$(dirname "$(node -p process.execPath)")/../include/node"
    [ -f "$node_inc/node_api.h" ] || { npx --no-install node-gyp install >/dev/null; node_inc="${HOME}/.cache/node-gyp/$(node -p process.versions.node)/include/node"; }
    napi_flags=(-I "$napi_inc" -I "$node_inc" -DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS)
  fi
  extra_libs=()
  [ -f "native/fuzz/${t}.libs" ] && read -r -a extra_libs <"native/fuzz/${t}.libs"
  echo "fuzz: building $t from ${srcs[*]} ${helpers[$t]:+(helpers, no coverage: ${helpers[$t]})}" >&2
  "$CXX" "${flags[@]}" "${napi_flags[@]}" "${srcs[@]}" "${helper_objs[@]}" "${extra_libs[@]}" -o "$out/$t"
done
printf '%s\n' "${targets[@]}" >"$out/targets.txt"
echo "fuzz: built ${targets[*]} in $root/$out" >&2
