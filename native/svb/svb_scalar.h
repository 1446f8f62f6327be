// Portable Stream VByte loops. The scalar kernels are made of these, and the
// SIMD kernels finish with them: the last groups of a stream are where a
// 16-byte load or store could cross the end of a buffer, so they are done
// here with exact-size, bounds-checked accesses.
#pragma once
#include <cstddef>
#include <cstdint>

#include "svb/svb_format.h"

namespace profpack {
namespace svb {

inline constexpr uint32_t kLengthMask[5] = {0u, 0xFFu, 0xFFFFu, 0xFFFFFFu, 0xFFFFFFFFu};

// Encodes in[i..n), i a multiple of 4, writing control bytes from control[i/4]
// and data from out[pos]; returns the position after the last data byte.
// Every value is stored as a 4-byte word: at value j at most 4*j data bytes
// precede it, so pos + 4 <= ControlLength(n) + 4*(j+1) <= MaxEncodedLength(n).
template <Variant V, Transform T>
inline size_t EncodeScalarFrom(const uint32_t* in, size_t i, size_t n, uint8_t* control, uint8_t* out, size_t pos,
                               uint32_t prev) {
  for (; i < n; i += 4) {
    const size_t lanes = n - i < 4 ? n - i : 4;
    uint32_t key = 0;  // unused codes of a last partial group stay zero
    for (size_t lane = 0; lane < lanes; ++lane) {
      const uint32_t v = Forward<T>(in[i + lane], prev);
      const uint32_t code = CodeOf<V>(v);
      StoreLE32(out + pos, v);
      pos += CodeLength<V>(code);
      key |= code << (2 * lane);
    }
    control[i / 4] = static_cast<uint8_t>(key);
  }
  return pos;
}

// Decodes values i..n (i a multiple of 4) whose data starts at in[pos];
// returns the position after the last data byte read.
template <Variant V, Transform T>
inline size_t DecodeScalarFrom(const uint8_t* in, size_t size, size_t n, size_t i, size_t pos, uint32_t* out,
                               uint32_t prev) {
  // A group takes at most 16 bytes, so with 16 left its 4-byte loads stay inside.
  for (; i + 4 <= n && size - pos >= 16; i += 4) {
    const uint32_t key = in[i / 4];
    for (unsigned lane = 0; lane < 4; ++lane) {
      const uint32_t length = CodeLength<V>((key >> (2 * lane)) & 3);
      const uint32_t v = LoadLE32(in + pos) & kLengthMask[length];
      pos += length;
      out[i + lane] = Inverse<T>(v, prev);
    }
  }
  for (; i < n; ++i) {
    const uint32_t length = CodeLength<V>((in[i / 4] >> (2 * (i % 4))) & 3);
    if (length > size - pos) ThrowDataTruncated(pos, i, length, size);
    uint32_t v = 0;
    for (uint32_t b = 0; b < length; ++b) v |= static_cast<uint32_t>(in[pos + b]) << (8 * b);
    pos += length;
    out[i] = Inverse<T>(v, prev);
  }
  return pos;
}

// The previous input value for a transform that restarts at value i.
inline uint32_t PrevAt(const uint32_t* in, size_t i, uint32_t prev) { return i == 0 ? prev : in[i - 1]; }

}  // namespace svb
}  // namespace profpack
