// libFuzzer target: Stream VByte decode, every variant (1234 plain, delta,
// zigzag, zigzag-delta; 0124) on every kernel level this CPU runs (scalar,
// SSE4.1, AVX2, forced through svb::KernelsFor rather than the process-wide
// PROFPACK_SIMD choice). All levels must agree with the scalar kernels value
// for value (or fail with the same error), consume exactly what the control
// bytes ask for, and re-encode to bytes that decode back to the same values.
//
// Input: byte 0 = variant (0..3 the 1234 transforms, 4 = 0124), bytes 1..4 =
// value count (LE, reduced to at most 4 per payload byte + 4), bytes 5..8 =
// prev (delta base), then the stream. The stream is the input's tail, so any
// read past it is a heap overflow ASan reports.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/cpu_features.h"
#include "common/error_codes.h"
#include "common/simd_level.h"
#include "fuzz/fuzz_common.h"
#include "svb/svb_format.h"
#include "svb/svb_kernels.h"

namespace {

using profpack::FormatError;
using profpack::SimdLevel;
namespace codes = profpack::codes;
namespace svb = profpack::svb;

struct Result {
  bool ok = false;
  size_t consumed = 0;
  std::vector<uint32_t> values;
  std::string code;
  int64_t offset = 0;
};

svb::DecodeFn DecoderOf(const svb::Kernels& k, unsigned variant) {
  return variant < 4 ? k.decode1234[variant] : k.decode0124;
}
svb::EncodeFn EncoderOf(const svb::Kernels& k, unsigned variant) {
  return variant < 4 ? k.encode1234[variant] : k.encode0124;
}

Result Decode(const svb::Kernels& k, unsigned variant, const uint8_t* in, size_t size, size_t n, uint32_t prev) {
  Result r;
  // Exactly n values: a kernel writing past them is a heap overflow.
  r.values.assign(n, 0);
  try {
    r.consumed = DecoderOf(k, variant)(in, size, n, r.values.data(), prev);
    r.ok = true;
  } catch (const FormatError& e) {
    profpack::fuzz::CheckFormatError(e, size, {codes::kSvbTruncated});
    r.code = e.code;
    r.offset = e.offset;
    r.values.clear();  // partly written on error: not part of the contract
  }
  return r;
}

std::vector<const svb::Kernels*> UsableKernels() {
  std::vector<const svb::Kernels*> out;
  const auto& cpu = profpack::DetectedCpuFeatures();
  for (SimdLevel level : profpack::kAllSimdLevels) {
    const svb::Kernels* k = svb::KernelsFor(level);
    if (k != nullptr && profpack::SimdLevelSupported(level, cpu) && k->level == level) out.push_back(k);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  static const std::vector<const svb::Kernels*> kernels = UsableKernels();
  profpack::fuzz::Params params(input, input_size);
  const unsigned variant = params.Byte() % 5;
  const uint32_t rawCount = params.U32();
  const uint32_t prev = params.U32();
  const uint8_t* in = params.rest();
  const size_t size = params.rest_size();
  const size_t n = rawCount % (4 * size + 5);
  const bool is0124 = variant == 4;

  const Result reference = Decode(*kernels[0], variant, in, size, n, prev);
  if (reference.ok) {
    // The contract of every level: exactly the control bytes plus the data they announce.
    const size_t want = is0124 ? svb::ControlLength(n) + svb::DataLength<svb::Variant::k0124>(in, n)
                               : svb::ControlLength(n) + svb::DataLength<svb::Variant::k1234>(in, n);
    PROFPACK_FUZZ_CHECK(reference.consumed == want, "scalar consumed " + std::to_string(reference.consumed) +
                                                        ", control bytes say " + std::to_string(want));
  } else {
    const bool controlShort = size < svb::ControlLength(n);
    const size_t dataNeeded = controlShort ? 0
                              : is0124     ? svb::DataLength<svb::Variant::k0124>(in, n)
                                           : svb::DataLength<svb::Variant::k1234>(in, n);
    PROFPACK_FUZZ_CHECK(controlShort || svb::ControlLength(n) + dataNeeded > size,
                        "scalar rejected a stream whose control bytes fit it");
  }
  for (size_t i = 1; i < kernels.size(); ++i) {
    const Result r = Decode(*kernels[i], variant, in, size, n, prev);
    const std::string level = profpack::SimdLevelName(kernels[i]->level);
    PROFPACK_FUZZ_CHECK(r.ok == reference.ok, level + " and scalar disagree on accepting the stream");
    if (r.ok) {
      PROFPACK_FUZZ_CHECK(r.consumed == reference.consumed, level + " consumed a different length");
      PROFPACK_FUZZ_CHECK(r.values == reference.values, level + " decoded different values");
    } else {
      PROFPACK_FUZZ_CHECK(r.code == reference.code && r.offset == reference.offset,
                          level + " error " + r.code + "@" + std::to_string(r.offset) + " != scalar " + reference.code +
                              "@" + std::to_string(reference.offset));
    }
  }
  if (!reference.ok) return 0;

  // Round trip: every level's encoder gives the same bytes, which decode back.
  std::vector<uint8_t> first;
  for (const svb::Kernels* k : kernels) {
    std::vector<uint8_t> buf(svb::MaxEncodedLength(n));
    const size_t len = EncoderOf(*k, variant)(reference.values.data(), n, buf.data(), prev);
    PROFPACK_FUZZ_CHECK(len <= buf.size(), "encoder overran MaxEncodedLength");
    PROFPACK_FUZZ_CHECK(len <= reference.consumed, "canonical encoding longer than the input stream");
    buf.resize(len);
    if (k == kernels[0]) first = buf;
    PROFPACK_FUZZ_CHECK(buf == first,
                        std::string(profpack::SimdLevelName(k->level)) + " encoder bytes differ from scalar");
    const Result back = Decode(*k, variant, buf.data(), buf.size(), n, prev);
    PROFPACK_FUZZ_CHECK(back.ok && back.consumed == len && back.values == reference.values,
                        "re-encoded stream does not decode back");
  }
  return 0;
}
