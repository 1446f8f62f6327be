// Stream VByte (shared/notes/streamvbyte.md, seed 002): ceil(n/4) control
// bytes, then the data bytes. Value i's 2-bit code sits in control byte i/4 at
// bits 2*(i%4)..2*(i%4)+1 (first value in the low bits); unused codes of the
// last control byte are zero and carry no data. The count n and any delta
// `prev` are not stored.
//   1234: code c -> c+1 little-endian bytes.
//   0124: code 0 -> the value 0 (no byte), 1 -> 1 byte, 2 -> 2 bytes, 3 -> 4 bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error_codes.h"
#include "common/format_error.h"

namespace profpack {
namespace svb {

enum class Variant { k1234, k0124 };

// What the 1234 stream holds for input x[i] (prev = x[-1]); the 0124 variant
// only exists plain, as in the reference library.
//   kDelta:       x[i] - x[i-1] mod 2^32 (streamvbyte_delta_encode)
//   kZigzag:      (x << 1) ^ (x >> 31), x as int32 (zigzag_encode)
//   kZigzagDelta: zigzag(x[i] - x[i-1]), the subtraction wrapping mod 2^32
enum class Transform { kPlain = 0, kDelta = 1, kZigzag = 2, kZigzagDelta = 3 };

inline constexpr size_t ControlLength(size_t n) { return (n + 3) / 4; }

// Worst case: every value takes 4 bytes. Kernels never write past this, so an
// output buffer of exactly this size needs no padding.
inline constexpr size_t MaxEncodedLength(size_t n) { return ControlLength(n) + 4 * n; }

inline uint32_t Code1234(uint32_t v) { return (v > 0xFFu) + (v > 0xFFFFu) + (v > 0xFFFFFFu); }
inline uint32_t Code0124(uint32_t v) { return v == 0 ? 0 : v <= 0xFFu ? 1 : v <= 0xFFFFu ? 2 : 3; }

template <Variant V>
inline constexpr uint32_t CodeLength(uint32_t code) {
  return V == Variant::k1234 ? code + 1 : (code == 3 ? 4 : code);
}

template <Variant V>
inline uint32_t CodeOf(uint32_t v) {
  return V == Variant::k1234 ? Code1234(v) : Code0124(v);
}

inline uint32_t ZigzagEncode(uint32_t x) { return (x << 1) ^ (0u - (x >> 31)); }
inline uint32_t ZigzagDecode(uint32_t u) { return (u >> 1) ^ (0u - (u & 1)); }

// x[i] -> the value stored for it; `prev` holds x[i-1].
template <Transform T>
inline uint32_t Forward(uint32_t x, uint32_t& prev) {
  uint32_t d = x;
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    d = x - prev;
    prev = x;
  }
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) d = ZigzagEncode(d);
  return d;
}

// The stored value -> x[i]; `prev` holds x[i-1].
template <Transform T>
inline uint32_t Inverse(uint32_t v, uint32_t& prev) {
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) v = ZigzagDecode(v);
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    prev += v;
    return prev;
  }
  return v;
}

// Byte-wise little-endian access: compilers turn these into single moves on
// little-endian hosts, and they stay correct on big-endian ones.
inline uint32_t LoadLE32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
inline void StoreLE32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

[[noreturn]] inline void ThrowControlTruncated(size_t size, size_t n) {
  throw FormatError(codes::kSvbTruncated,
                    "Stream VByte stream of " + std::to_string(size) + " bytes is shorter than the " +
                        std::to_string(ControlLength(n)) + " control bytes of " + std::to_string(n) + " values",
                    static_cast<int64_t>(size), std::to_string(ControlLength(n)) + " control bytes");
}

[[noreturn]] inline void ThrowDataTruncated(size_t dataPos, size_t index, uint32_t length, size_t size) {
  throw FormatError(codes::kSvbTruncated,
                    "Stream VByte value " + std::to_string(index) + " needs " + std::to_string(length) +
                        " data bytes but the stream ends after " + std::to_string(size - dataPos),
                    static_cast<int64_t>(dataPos),
                    std::to_string(length) + " data bytes for value " + std::to_string(index));
}

// Bytes the encoding of in[0..n) takes (control + data), with T applied.
template <Variant V, Transform T>
inline size_t EncodedLength(const uint32_t* in, size_t n, uint32_t prev) {
  size_t data = 0;
  for (size_t i = 0; i < n; ++i) data += CodeLength<V>(CodeOf<V>(Forward<T>(in[i], prev)));
  return ControlLength(n) + data;
}

// Data bytes the first n codes call for; the caller checked size >= ControlLength(n).
template <Variant V>
inline size_t DataLength(const uint8_t* control, size_t n) {
  size_t data = 0;
  const size_t full = n / 4;
  for (size_t g = 0; g < full; ++g) {
    const uint32_t key = control[g];
    data += CodeLength<V>(key & 3) + CodeLength<V>((key >> 2) & 3) + CodeLength<V>((key >> 4) & 3) +
            CodeLength<V>(key >> 6);
  }
  for (size_t i = full * 4; i < n; ++i) data += CodeLength<V>((control[i / 4] >> (2 * (i % 4))) & 3);
  return data;
}

// True only when `size` is exactly what the control bytes of n values demand
// (streamvbyte_validate_stream).
template <Variant V>
inline bool Validate(const uint8_t* in, size_t size, size_t n) {
  if (size < ControlLength(n)) return false;
  return size - ControlLength(n) == DataLength<V>(in, n);
}

}  // namespace svb
}  // namespace profpack
