// libFuzzer target: LEB128 batch decode, every kind the addon's decodeMany
// offers (native/varint/varint_napi.cc numbers them 0..5), checked value by
// value against a slow reference decoder that works in 128 bits, plus a
// re-encode round trip. For u32 and zigzag32 the batch kernels decodeMany
// really runs (the portable 64-byte-window kernel, and BMI2 pext where the CPU
// has it) must give the same values, end offset and error as the one-value loop.
//
// Input: byte 0 = kind, byte 1 = value count (255: as many as bytes, 254:
// half that), byte 2 = start offset, then the varint bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cpu_features.h"
#include "common/error_codes.h"
#include "fuzz/fuzz_common.h"
#include "varint/leb128.h"

namespace {

using profpack::FormatError;
namespace codes = profpack::codes;
namespace leb128 = profpack::leb128;

enum Kind : uint8_t { kU32 = 0, kU64 = 1, kZigzag32 = 2, kI64 = 3, kI32 = 4, kZigzag64 = 5, kKinds = 6 };

struct Expected {
  bool ok;
  const char* code;  // when !ok
  __int128 value;    // when ok: the mathematically exact value
  size_t end;
};

// The contract, written independently of leb128.h: at most `max_bytes` bytes,
// the last allowed byte may not continue, the exact value (sign-extended for
// signed kinds) must fit the target type, and running out of input first is
// truncation.
Expected Reference(const uint8_t* data, size_t size, size_t pos, unsigned max_bytes, bool is_signed, unsigned bits) {
  unsigned __int128 raw = 0;
  for (unsigned i = 0; i < max_bytes; ++i) {
    if (pos + i >= size) return {false, codes::kVarintTruncated, 0, 0};
    const uint8_t byte = data[pos + i];
    raw |= static_cast<unsigned __int128>(byte & 0x7f) << (7 * i);
    if (byte & 0x80) {
      if (i + 1 == max_bytes) return {false, codes::kVarintOverflow, 0, 0};
      continue;
    }
    const unsigned width = 7 * (i + 1);
    __int128 value = static_cast<__int128>(raw);
    if (is_signed && (byte & 0x40)) value -= static_cast<__int128>(1) << width;
    const __int128 lo = is_signed ? -(static_cast<__int128>(1) << (bits - 1)) : 0;
    const __int128 hi =
        is_signed ? (static_cast<__int128>(1) << (bits - 1)) - 1 : (static_cast<__int128>(1) << bits) - 1;
    if (value < lo || value > hi) return {false, codes::kVarintOverflow, 0, 0};
    return {true, nullptr, value, pos + i + 1};
  }
  return {false, codes::kVarintOverflow, 0, 0};
}

std::string Hex(__int128 v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llx:%016llx",
                static_cast<unsigned long long>(static_cast<unsigned __int128>(v) >> 64),
                static_cast<unsigned long long>(v));
  return buf;
}

// Decodes one value of `kind` at pos; returns its exact value.
__int128 DecodeOne(uint8_t kind, const uint8_t* data, size_t size, size_t& pos) {
  switch (kind) {
    case kU32: return leb128::DecodeU32(data, size, pos);
    case kU64: return leb128::DecodeU64(data, size, pos);
    case kZigzag32: return leb128::DecodeU32(data, size, pos);  // zigzag checked by the caller
    case kI64: return leb128::DecodeI64(data, size, pos);
    case kI32: return leb128::DecodeI32(data, size, pos);
    default: return leb128::DecodeU64(data, size, pos);
  }
}

struct BatchResult {
  bool ok = false;
  size_t end = 0;
  std::vector<uint32_t> values;
  std::string code;
  int64_t offset = 0;
};

template <typename F>
BatchResult RunBatch(size_t count, F&& decode) {
  BatchResult r;
  r.values.assign(count, 0);  // exactly count: a kernel writing past it is a heap overflow
  try {
    r.end = decode(r.values.data());
    r.ok = true;
  } catch (const FormatError& e) {
    r.code = e.code;
    r.offset = e.offset;
    r.values.clear();  // partly written on error: not part of the contract
  }
  return r;
}

void CheckBatchKernels(uint8_t kind, const uint8_t* data, size_t size, size_t start, size_t count) {
  const bool zigzag = kind == kZigzag32;
  // The one-value loop is the reference the batch kernels must match.
  const BatchResult want = RunBatch(count, [&](uint32_t* out) {
    size_t pos = start;
    for (size_t i = 0; i < count; ++i) {
      const uint32_t v = leb128::DecodeU32(data, size, pos);
      out[i] = zigzag ? static_cast<uint32_t>(leb128::ZigzagDecode32(v)) : v;
    }
    return pos;
  });
  auto compare = [&](const BatchResult& got, const char* name) {
    PROFPACK_FUZZ_CHECK(got.ok == want.ok, std::string(name) + " and the one-value loop disagree on accepting");
    if (got.ok) {
      PROFPACK_FUZZ_CHECK(got.end == want.end, std::string(name) + " end offset differs");
      PROFPACK_FUZZ_CHECK(got.values == want.values, std::string(name) + " values differ");
    } else {
      PROFPACK_FUZZ_CHECK(got.code == want.code && got.offset == want.offset,
                          std::string(name) + " error " + got.code + "@" + std::to_string(got.offset) +
                              " != " + want.code + "@" + std::to_string(want.offset));
    }
  };
  compare(RunBatch(count,
                   [&](uint32_t* out) {
                     return zigzag ? leb128::DecodeU32BatchWith<leb128::PortableKernel, true>(
                                         data, size, start, count, reinterpret_cast<int32_t*>(out))
                                   : leb128::DecodeU32BatchWith<leb128::PortableKernel, false>(data, size, start, count,
                                                                                               out);
                   }),
          "portable batch kernel");
  if (profpack::DetectedCpuFeatures().bmi2) {
    compare(RunBatch(count,
                     [&](uint32_t* out) {
                       return zigzag ? leb128::DecodeZigzag32BatchBmi2(data, size, start, count,
                                                                       reinterpret_cast<int32_t*>(out))
                                     : leb128::DecodeU32BatchBmi2(data, size, start, count, out);
                     }),
            "BMI2 batch kernel");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  profpack::fuzz::Params params(input, input_size);
  const uint8_t kind = params.Byte() % kKinds;
  const uint8_t countSel = params.Byte();
  const uint8_t startSel = params.Byte();
  const uint8_t* data = params.rest();
  const size_t size = params.rest_size();
  const size_t start = startSel % (size + 1);
  const size_t count = countSel == 255 ? size - start : countSel == 254 ? (size - start) / 2 : countSel;
  const bool wide = kind == kU64 || kind == kI64 || kind == kZigzag64;
  const bool is_signed = kind == kI64 || kind == kI32;
  const unsigned max_bytes = wide ? 10 : 5;
  const unsigned bits = wide ? 64 : 32;

  if (kind == kU32 || kind == kZigzag32) CheckBatchKernels(kind, data, size, start, count);

  size_t pos = start;
  for (size_t i = 0; i < count; ++i) {
    const size_t begin = pos;
    const Expected want = Reference(data, size, pos, max_bytes, is_signed, bits);
    try {
      const __int128 got = DecodeOne(kind, data, size, pos);
      PROFPACK_FUZZ_CHECK(want.ok, std::string("decoder accepted what the reference rejects as ") + want.code);
      PROFPACK_FUZZ_CHECK(got == want.value, "value " + Hex(got) + " != reference " + Hex(want.value));
      PROFPACK_FUZZ_CHECK(pos == want.end, "end " + std::to_string(pos) + " != reference " + std::to_string(want.end));

      // Round trip: the canonical encoding of the value decodes to the same value.
      uint8_t buf[leb128::kMaxBytesU64];
      size_t len;
      if (is_signed) {
        len = leb128::EncodeI64(static_cast<int64_t>(got), buf, 0);
      } else {
        len = leb128::EncodeU64(static_cast<uint64_t>(got), buf, 0);
      }
      PROFPACK_FUZZ_CHECK(len <= pos - begin, "canonical encoding longer than the input's");
      if (!is_signed)
        PROFPACK_FUZZ_CHECK(len == leb128::EncodedLengthU64(static_cast<uint64_t>(got)), "EncodedLengthU64");
      size_t again = 0;
      const __int128 back = DecodeOne(kind, buf, len, again);
      PROFPACK_FUZZ_CHECK(back == got && again == len, "re-encoded value does not decode back");

      if (kind == kZigzag32) {
        const int32_t z = leb128::ZigzagDecode32(static_cast<uint32_t>(got));
        PROFPACK_FUZZ_CHECK(leb128::ZigzagEncode32(z) == static_cast<uint32_t>(got), "zigzag32 round trip");
      } else if (kind == kZigzag64) {
        const int64_t z = leb128::ZigzagDecode64(static_cast<uint64_t>(got));
        PROFPACK_FUZZ_CHECK(leb128::ZigzagEncode64(z) == static_cast<uint64_t>(got), "zigzag64 round trip");
      }
    } catch (const FormatError& e) {
      PROFPACK_FUZZ_CHECK(!want.ok, std::string("decoder rejected a valid varint: ") + e.what());
      PROFPACK_FUZZ_CHECK(e.code == want.code, "code " + e.code + " != reference " + want.code);
      PROFPACK_FUZZ_CHECK(e.offset == static_cast<int64_t>(begin), "error offset is not the varint's start");
      profpack::fuzz::CheckFormatError(e, size, {codes::kVarintTruncated, codes::kVarintOverflow});
      return 0;
    }
  }
  return 0;
}
