#include "tachyon/v2/model_columns.h"

#include "common/error_codes.h"

namespace profpack {
namespace v2 {

namespace {

// Zigzag codes up to 2^53 (the writer keeps every delta within ±2^52).
constexpr uint64_t kMaxCode = uint64_t{1} << 53;

// Unsigned LEB128 of at most 8 bytes and 2^53, as model.ts's uvarint53 reads it.
uint64_t ReadCode(const uint8_t* data, size_t size, size_t& pos, int64_t base) {
  const size_t start = pos;
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) {
    if (pos >= size) {
      throw FormatError(codes::kV2Truncated, "value cut off by the end of its span", base + static_cast<int64_t>(pos),
                        "one more byte");
    }
    const uint8_t byte = data[pos++];
    value += static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      if (value > kMaxCode) break;
      return value;
    }
  }
  throw FormatError(codes::kV2BadModel, "value is not a LEB128 integer up to 2^53", base + static_cast<int64_t>(start),
                    "at most 8 bytes and 2^53");
}

}  // namespace

size_t DecodeDeltaColumn(const uint8_t* data, size_t size, int64_t base, size_t n, double* out) {
  size_t pos = 0;
  double value = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t code = ReadCode(data, size, pos, base);
    // The same double arithmetic as the JS twin: a delta is exact (|delta| <= 2^52), the sum rounds alike.
    const double delta = (code & 1) == 0 ? static_cast<double>(code / 2) : -static_cast<double>((code + 1) / 2);
    value += delta;
    out[i] = value;
  }
  return pos;
}

}  // namespace v2
}  // namespace profpack
