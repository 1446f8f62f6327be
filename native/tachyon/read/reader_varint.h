// LEB128 exactly as CPython 3.15.2's Tachyon reader decodes it (not the
// strict decoders of varint/leb128.h): no canonical-form check, at most 10
// bytes, bits of the 10th byte above bit 63 dropped, failure only when a 10th
// byte still has the continuation bit or the data ends. u32 fields are read
// as u64 and range-checked. Twin of lib/tachyon/read/varint.ts.
#pragma once
#include <cstddef>
#include <cstdint>

namespace profpack {
namespace tachyon {

// Returns false (and leaves pos) on failure.
inline bool ReadVarU64(const uint8_t* data, size_t end, size_t& pos, uint64_t& value) {
  size_t p = pos;
  if (p < end && data[p] < 0x80) {
    value = data[p];
    pos = p + 1;
    return true;
  }
  uint64_t result = 0;
  unsigned shift = 0;
  while (p < end) {
    const uint8_t byte = data[p++];
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      value = result;
      pos = p;
      return true;
    }
    shift += 7;
    if (shift >= 64) return false;
  }
  return false;
}

inline bool ReadVarU32(const uint8_t* data, size_t end, size_t& pos, uint32_t& value) {
  if (pos < end && data[pos] < 0x80) {
    value = data[pos++];
    return true;
  }
  size_t p = pos;
  uint64_t v;
  if (!ReadVarU64(data, end, p, v) || v > 0xffffffffu) return false;
  value = static_cast<uint32_t>(v);
  pos = p;
  return true;
}

}  // namespace tachyon
}  // namespace profpack
