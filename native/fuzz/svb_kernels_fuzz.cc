// libFuzzer harness for the Stream VByte kernels (not linked into the addon).
// Under AddressSanitizer every buffer is an exact-size heap copy, so a 16-byte
// over-read or over-write in any kernel is reported. Checks, at every level
// this CPU has: decoding arbitrary bytes either fails with ERR_SVB_TRUNCATED
// at the same offset or gives the same values as the scalar kernel, and
// encoding the fuzz input (as uint32 values) matches the scalar bytes and
// decodes back.
//
// Built and run as target svb_kernels by test/fuzz/build.sh and run.sh (the
// svb engineer's harness; native/fuzz/svb_fuzz.cc is the contract-level one).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "common/cpu_features.h"
#include "common/error_codes.h"
#include "common/simd_level.h"
#include "svb/svb_format.h"
#include "svb/svb_kernels.h"

using profpack::FormatError;
using profpack::SimdLevel;
namespace codes = profpack::codes;
namespace svb = profpack::svb;

namespace {

struct Outcome {
  bool failed = false;
  int64_t offset = -1;
  size_t used = 0;
  std::vector<uint32_t> values;
};

Outcome Decode(svb::DecodeFn fn, const uint8_t* data, size_t size, size_t count, uint32_t prev) {
  // Exact-size copies: ASan flags any access past them.
  std::unique_ptr<uint8_t[]> in(new uint8_t[size == 0 ? 1 : size]);
  if (size != 0) std::memcpy(in.get(), data, size);
  std::unique_ptr<uint32_t[]> out(new uint32_t[count == 0 ? 1 : count]);
  Outcome o;
  try {
    o.used = fn(size == 0 ? nullptr : in.get(), size, count, out.get(), prev);
    o.values.assign(out.get(), out.get() + count);
  } catch (const FormatError& e) {
    if (e.code != codes::kSvbTruncated) std::abort();
    o.failed = true;
    o.offset = e.offset;
  }
  return o;
}

bool Same(const Outcome& a, const Outcome& b) {
  return a.failed == b.failed && a.offset == b.offset && a.used == b.used && a.values == b.values;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const size_t count = (static_cast<size_t>(data[0]) | static_cast<size_t>(data[1]) << 8) % 2048;
  const unsigned selector = data[2];
  const uint32_t prev = selector * 0x01010101u;
  data += 3;
  size -= 3;
  const svb::Kernels& scalar = svb::ScalarKernels();
  std::vector<const svb::Kernels*> levels;
  for (SimdLevel level : profpack::kAllSimdLevels) {
    if (level == SimdLevel::kScalar) continue;
    if (profpack::SimdLevelSupported(level, profpack::DetectedCpuFeatures()) && svb::KernelsFor(level) != nullptr) {
      levels.push_back(svb::KernelsFor(level));
    }
  }
  const unsigned transform = selector % 4;
  const bool use0124 = (selector & 0x10) != 0;

  // Decode arbitrary bytes.
  const svb::DecodeFn scalarDecode = use0124 ? scalar.decode0124 : scalar.decode1234[transform];
  const Outcome expected = Decode(scalarDecode, data, size, count, prev);
  for (const svb::Kernels* k : levels) {
    if (!Same(Decode(use0124 ? k->decode0124 : k->decode1234[transform], data, size, count, prev), expected))
      std::abort();
  }

  // Encode the bytes as uint32 values into exact MaxEncodedLength buffers:
  // four bytes per value, or (selector bit 0x20) one byte per value, which
  // drives the one-byte fast paths.
  const bool bytewise = (selector & 0x20) != 0;
  const size_t n = bytewise ? size : size / 4;
  std::unique_ptr<uint32_t[]> values(new uint32_t[n == 0 ? 1 : n]);
  for (size_t i = 0; i < n; ++i) {
    values[i] = bytewise
                    ? data[i]
                    : static_cast<uint32_t>(data[4 * i]) | static_cast<uint32_t>(data[4 * i + 1]) << 8 |
                          static_cast<uint32_t>(data[4 * i + 2]) << 16 | static_cast<uint32_t>(data[4 * i + 3]) << 24;
  }
  const size_t cap = svb::MaxEncodedLength(n);
  std::unique_ptr<uint8_t[]> reference(new uint8_t[cap == 0 ? 1 : cap]);
  const svb::EncodeFn scalarEncode = use0124 ? scalar.encode0124 : scalar.encode1234[transform];
  const size_t length = scalarEncode(values.get(), n, reference.get(), prev);
  const Outcome back = Decode(scalarDecode, reference.get(), length, n, prev);
  // n == 0 leaves back.values empty (data() may be null): memcmp on it is UB even for 0 bytes.
  if (back.failed || back.used != length || (n != 0 && std::memcmp(back.values.data(), values.get(), 4 * n) != 0))
    std::abort();
  for (const svb::Kernels* k : levels) {
    std::unique_ptr<uint8_t[]> out(new uint8_t[cap == 0 ? 1 : cap]);
    const size_t got = (use0124 ? k->encode0124 : k->encode1234[transform])(values.get(), n, out.get(), prev);
    if (got != length || std::memcmp(out.get(), reference.get(), length) != 0) std::abort();
  }
  return 0;
}
