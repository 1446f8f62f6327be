// LEB128 (unsigned and signed, seed 001) and zigzag, as pure C++ so the same
// decoders serve the addon, the Tachyon reader and the libFuzzer harnesses.
// Every decoder is given the end of its buffer and never reads past it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/error_codes.h"
#include "common/format_error.h"
#include "common/simd_level.h"

namespace profpack {
namespace leb128 {

[[noreturn]] inline void ThrowTruncated(size_t start, const char* what) {
  throw FormatError(codes::kVarintTruncated, std::string("varint cut off by the end of the buffer (") + what + ")",
                    static_cast<int64_t>(start),
                    std::string("a byte without the continuation bit before the end, for ") + what);
}
[[noreturn]] inline void ThrowOverflow(size_t start, const char* what, const char* limit) {
  throw FormatError(codes::kVarintOverflow, std::string("varint does not fit ") + what, static_cast<int64_t>(start),
                    limit);
}

// Unsigned LEB128 into 32 bits: at most 5 bytes, the 5th carrying only bits 28..31.
inline uint32_t DecodeU32(const uint8_t* data, size_t size, size_t& pos) {
  const size_t start = pos;
  if (pos < size && data[pos] < 0x80) return data[pos++];  // most values are one byte
  uint32_t value = 0;
  for (unsigned i = 0; i < 5; ++i) {
    if (pos >= size) ThrowTruncated(start, "u32");
    const uint8_t byte = data[pos++];
    if (i == 4) {
      if (byte & 0x80) ThrowOverflow(start, "u32", "at most 5 bytes");
      if (byte > 0x0f) ThrowOverflow(start, "u32", "the 5th byte to carry at most 4 bits");
    }
    value |= static_cast<uint32_t>(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) return value;
  }
  ThrowOverflow(start, "u32", "at most 5 bytes");
}

// Unsigned LEB128 into 64 bits: at most 10 bytes, the 10th carrying only bit 63.
inline uint64_t DecodeU64(const uint8_t* data, size_t size, size_t& pos) {
  const size_t start = pos;
  if (pos < size && data[pos] < 0x80) return data[pos++];
  uint64_t value = 0;
  for (unsigned i = 0; i < 10; ++i) {
    if (pos >= size) ThrowTruncated(start, "u64");
    const uint8_t byte = data[pos++];
    if (i == 9) {
      if (byte & 0x80) ThrowOverflow(start, "u64", "at most 10 bytes");
      if (byte > 0x01) ThrowOverflow(start, "u64", "the 10th byte to carry at most 1 bit");
    }
    value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) return value;
  }
  ThrowOverflow(start, "u64", "at most 10 bytes");
}

// Signed LEB128 (seed 001's getSLEB128) into 64 bits. The last byte's bit 6 is
// the sign; bits beyond 64 must be a plain sign extension.
inline int64_t DecodeI64(const uint8_t* data, size_t size, size_t& pos) {
  const size_t start = pos;
  uint64_t value = 0;
  for (unsigned i = 0; i < 10; ++i) {
    if (pos >= size) ThrowTruncated(start, "i64");
    const uint8_t byte = data[pos++];
    if (i == 9) {
      // Bit 63 plus six sign-extension bits: only 0x00 and 0x7f are exact.
      if (byte & 0x80) ThrowOverflow(start, "i64", "at most 10 bytes");
      if (byte != 0x00 && byte != 0x7f) ThrowOverflow(start, "i64", "a 10th byte of 0x00 or 0x7f");
    }
    value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      const unsigned shift = 7 * (i + 1);
      if (shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
      return static_cast<int64_t>(value);
    }
  }
  ThrowOverflow(start, "i64", "at most 10 bytes");
}

// Signed LEB128 into 32 bits: the 5th byte's bits 3..6 must all equal bit 3.
inline int32_t DecodeI32(const uint8_t* data, size_t size, size_t& pos) {
  const size_t start = pos;
  uint32_t value = 0;
  for (unsigned i = 0; i < 5; ++i) {
    if (pos >= size) ThrowTruncated(start, "i32");
    const uint8_t byte = data[pos++];
    if (i == 4) {
      if (byte & 0x80) ThrowOverflow(start, "i32", "at most 5 bytes");
      const uint8_t high = byte & 0x78;
      if (high != 0 && high != 0x78) ThrowOverflow(start, "i32", "a 5th byte whose bits 3..6 are a sign extension");
    }
    value |= static_cast<uint32_t>(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      const unsigned shift = 7 * (i + 1);
      if (shift < 32 && (byte & 0x40)) value |= ~uint32_t{0} << shift;
      return static_cast<int32_t>(value);
    }
  }
  ThrowOverflow(start, "i32", "at most 5 bytes");
}

// Batch u32 decode. Where 72 bytes remain it finds the value ends of a 64-byte
// window at once (a bitmap of bytes without the continuation bit) and
// extracts each value from an 8-byte load: no value waits for the previous
// one's length, unlike the byte-at-a-time loop, whose branches mispredict on
// mixed lengths. Anything unusual (a value over 5 bytes, a 5th byte with more
// than 4 bits) goes to DecodeU32, which throws the exact error.
// `Kernel` supplies EndsOf8 (flags of the 8 bytes of a word, one bit each)
// and Extract (the value in the low `length` bytes of a word).
struct PortableKernel {
  static uint64_t EndsOf8(uint64_t word) {
    const uint64_t stops = (~word & 0x8080808080808080ull) >> 7;  // bit 8j set: byte j ends a value
    return (stops * 0x0102040810204080ull) >> 56;                 // gather the 8 flags into one byte
  }
  static uint64_t Extract(uint64_t word, size_t length) {
    word &= (uint64_t{1} << (8 * length)) - 1;
    return (word & 0x7f) | ((word >> 1) & 0x3f80) | ((word >> 2) & 0x1fc000) | ((word >> 3) & 0xfe00000) |
           ((word >> 4) & 0x7f0000000ull);
  }
};

inline uint64_t LoadLE64(const uint8_t* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  word = __builtin_bswap64(word);
#endif
  return word;
}

// Value ends of a 64-byte window that starts with twelve 5-byte values (bits
// 4, 9, ..., 59). Uniform 32-bit data is ~94 % 5-byte values; such a window
// decodes as twelve independent extractions instead of twelve turns of the
// ctz chain, which measured 3-4x slower than that on this data.
inline constexpr uint64_t kTwelveFiveByteEnds = 0x0842108421084210ull;
inline constexpr uint64_t kTwelveFiveByteSpan = (uint64_t{1} << 60) - 1;

template <bool kZigzag, typename Out>
inline Out StoredU32(uint32_t value) {
  if constexpr (kZigzag) {
    return static_cast<Out>((value >> 1) ^ (0u - (value & 1)));
  } else {
    return static_cast<Out>(value);
  }
}

template <typename Kernel, bool kZigzag, typename Out>
inline size_t DecodeU32BatchWith(const uint8_t* data, size_t size, size_t pos, size_t count, Out* out) {
  size_t i = 0;
  while (i < count && size >= 72 && pos <= size - 72) {
    uint64_t ends = 0;
    for (unsigned k = 0; k < 8; ++k) ends |= Kernel::EndsOf8(LoadLE64(data + pos + 8 * k)) << (8 * k);
    if (ends == 0) goto careful;
    if ((ends & kTwelveFiveByteSpan) == kTwelveFiveByteEnds && count - i >= 12) {
      uint64_t high = 0;
      for (unsigned k = 0; k < 12; ++k) {
        const uint64_t wide = Kernel::Extract(LoadLE64(data + pos + 5 * k), 5);
        high |= wide;
        out[i + k] = StoredU32<kZigzag, Out>(static_cast<uint32_t>(wide));
      }
      if (__builtin_expect((high >> 32) != 0, 0)) goto careful;  // a 5th byte with more than 4 bits: redo these exactly
      i += 12;
      pos += 60;
      continue;
    }
    // 64 one-byte values (small values, the common case of ids and deltas): a widening copy the compiler
    // vectorises, instead of 64 turns of the ctz chain below.
    if (ends == ~uint64_t{0} && count - i >= 64) {
      for (unsigned k = 0; k < 64; ++k) out[i + k] = StoredU32<kZigzag, Out>(data[pos + k]);
      i += 64;
      pos += 64;
      continue;
    }
    {
      size_t start = pos;
      while (ends != 0 && i < count) {
        const size_t end = pos + static_cast<size_t>(__builtin_ctzll(ends));
        const size_t length = end - start + 1;
        if (__builtin_expect(length > 5, 0)) {
          pos = start;
          goto careful;
        }
        const uint64_t wide = Kernel::Extract(LoadLE64(data + start), length);
        if (__builtin_expect(wide > 0xffffffffull, 0)) {  // a 5th byte with more than 4 bits
          pos = start;
          goto careful;
        }
        out[i++] = StoredU32<kZigzag, Out>(static_cast<uint32_t>(wide));
        ends &= ends - 1;
        start = end + 1;
      }
      pos = start;
    }
  }
careful:
  for (; i < count; ++i) out[i] = StoredU32<kZigzag, Out>(DecodeU32(data, size, pos));
  return pos;
}

// The same with BMI2's pext (native/varint/leb128_bmi2.cc): about 1.8x the
// portable kernel where pext is fast (Intel, AMD Zen 3 and later).
size_t DecodeU32BatchBmi2(const uint8_t* data, size_t size, size_t pos, size_t count, uint32_t* out);
size_t DecodeZigzag32BatchBmi2(const uint8_t* data, size_t size, size_t pos, size_t count, int32_t* out);

// The batch u32 decoders of one kernel. The addon picks them once per SIMD
// level (BatchKernelsFor), never per call.
struct BatchKernels {
  const char* name;  // "bmi2" or "portable"
  size_t (*decodeU32)(const uint8_t* data, size_t size, size_t pos, size_t count, uint32_t* out);
  size_t (*decodeZigzag32)(const uint8_t* data, size_t size, size_t pos, size_t count, int32_t* out);
};

// BMI2 where the level includes it for this CPU (SimdLevelUsesPext), else portable.
const BatchKernels& BatchKernelsFor(SimdLevel level);

inline uint32_t ZigzagEncode32(int32_t v) { return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31); }
inline int32_t ZigzagDecode32(uint32_t u) { return static_cast<int32_t>((u >> 1) ^ (0u - (u & 1))); }
inline uint64_t ZigzagEncode64(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t ZigzagDecode64(uint64_t u) { return static_cast<int64_t>((u >> 1) ^ (0ull - (u & 1))); }

// Encoders write into a buffer the caller sized with MaxBytes*; they return the new position.
inline constexpr size_t kMaxBytesU32 = 5;
inline constexpr size_t kMaxBytesU64 = 10;

inline size_t EncodeU64(uint64_t value, uint8_t* out, size_t pos) {
  while (value >= 0x80) {
    out[pos++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[pos++] = static_cast<uint8_t>(value);
  return pos;
}
inline size_t EncodeU32(uint32_t value, uint8_t* out, size_t pos) { return EncodeU64(value, out, pos); }

inline size_t EncodeI64(int64_t value, uint8_t* out, size_t pos) {
  for (;;) {
    const uint8_t byte = static_cast<uint8_t>(value & 0x7f);
    value >>= 7;  // arithmetic shift keeps the sign
    const bool done = (value == 0 && !(byte & 0x40)) || (value == -1 && (byte & 0x40));
    out[pos++] = done ? byte : static_cast<uint8_t>(byte | 0x80);
    if (done) return pos;
  }
}

inline size_t EncodedLengthU64(uint64_t value) {
  size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

}  // namespace leb128
}  // namespace profpack
