// The "linear index" encoding of a pcvalue table (seed 000), byte-compatible
// with the reference encoder (aclements/go-misc pcvaluetab, commit b79a1c9):
//
//   chunk index   offsets of chunks 1..n-1 from the end of the index:
//                 [n-1]u8 | 0xfe [n-1]u16le | 0xff [n-1]u32le
//   chunk         n u8, pcs [n]u8, vlen [n+1]2-bit codes (low bits first,
//                 padded with 0b00), vals [n+1] int8/int16/int32 little-endian
//
// Everything is in PC quanta: chunk = (pc/quantum) >> 8. The format stores no
// size; it is kept beside the bytes. Nothing here touches N-API.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "pctable/format.h"
#include "pctable/varint_table.h"

namespace profpack {
namespace pctable {

enum class IndexWidth : uint8_t { kNone = 0, kU8 = 1, kU16 = 2, kU32 = 4 };

// ceil(quanta / 256) without overflowing at quanta = 2^32 - 1.
inline uint32_t ChunkCount(uint32_t quanta) { return quanta / kChunkQuanta + (quanta % kChunkQuanta != 0 ? 1 : 0); }

// Byte length of one value for each 2-bit code (0b00 is unused: 0 bytes).
inline constexpr uint8_t kValueBytes[4] = {0, 1, 2, 4};

// Sum of the value lengths of the four codes packed in one vlen byte: the
// reference's trick of summing whole vlen bytes, with unused fields masked to 0b00.
struct VlenByteSums {
  uint8_t sum[256];
  constexpr VlenByteSums() : sum() {
    for (unsigned b = 0; b < 256; ++b) {
      sum[b] = static_cast<uint8_t>(kValueBytes[b & 3] + kValueBytes[(b >> 2) & 3] + kValueBytes[(b >> 4) & 3] +
                                    kValueBytes[b >> 6]);
    }
  }
};
inline constexpr VlenByteSums kVlenByteSums{};

// Encodes a decoded varint table covering `sizeBytes` (a multiple of quantum,
// equal to the runs' end). Chooses widths exactly as the reference does.
std::vector<uint8_t> EncodeLinear(const std::vector<VarintRun>& runs, uint32_t sizeBytes, uint32_t quantum);

// LookupLinearPadded reads whole 16-byte blocks of pcs and 4-byte values (the
// reference reads 4-byte values too), but only inside memory we own: every buffer it gets has
// at least this many bytes after the validated encoding (zero padding).
// LinearTable::Lookup reads exactly the coded bytes and needs none.
inline constexpr size_t kLookupPadding = 16;

// k = how many of the n ascending change points are <= target.
inline uint32_t CountAtMost(const uint8_t* pcs, uint32_t n, uint32_t target) {
#if defined(__SSE2__)
  const __m128i t = _mm_set1_epi8(static_cast<char>(target));
  uint32_t k = 0;
  for (;;) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pcs + k));
    // Unsigned v <= t  <=>  max(v, t) == t. Lanes past n are other bytes of the chunk.
    const uint32_t le = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, t), t)));
    const uint32_t prefix = static_cast<uint32_t>(__builtin_ctz(~le));  // pcs ascend: the hits are a prefix
    k += prefix;
    if (prefix < 16 || k >= n) return k < n ? k : n;
  }
#else
  uint32_t k = 0;
  while (k < n && pcs[k] <= target) ++k;
  return k;
#endif
}

// A value of 1, 2 or 4 bytes (code 0b01/0b10/0b11), sign-extended; reads 4 bytes.
inline int32_t ReadPaddedValue(const uint8_t* p, uint32_t code) {
  static constexpr uint8_t kShift[4] = {0, 24, 16, 0};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  const uint32_t raw = static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                       (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
#else
  uint32_t raw;
  std::memcpy(&raw, p, 4);
#endif
  const uint32_t shift = kShift[code];
  return static_cast<int32_t>(raw << shift) >> shift;
}

inline uint32_t ReadIndexEntry(const uint8_t* table, IndexWidth width, uint32_t chunk) {
  switch (width) {
    case IndexWidth::kU8: return table[chunk - 1];
    case IndexWidth::kU16: {
      const uint8_t* e = table + 1 + 2 * static_cast<size_t>(chunk - 1);
      return static_cast<uint32_t>(e[0]) | (static_cast<uint32_t>(e[1]) << 8);
    }
    case IndexWidth::kU32: {
      const uint8_t* e = table + 1 + 4 * static_cast<size_t>(chunk - 1);
      return static_cast<uint32_t>(e[0]) | (static_cast<uint32_t>(e[1]) << 8) | (static_cast<uint32_t>(e[2]) << 16) |
             (static_cast<uint32_t>(e[3]) << 24);
    }
    default: return 0;
  }
}

// ReadIndexEntry without branches on the width (unpredictable across tables):
// reads 4 bytes at the entry (padded memory) and masks them; chunk 0 -> 0.
inline uint32_t PaddedIndexEntry(const uint8_t* table, IndexWidth width, uint32_t chunk) {
  static constexpr uint32_t kMask[5] = {0, 0xff, 0xffff, 0, 0xffffffff};
  const uint32_t w = static_cast<uint32_t>(width);
  const size_t at = chunk == 0 ? 0 : static_cast<size_t>(w) * (chunk - 1) + (w > 1 ? 1 : 0);
  const uint32_t mask = chunk == 0 ? 0 : kMask[w];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  const uint8_t* e = table + at;
  const uint32_t raw = static_cast<uint32_t>(e[0]) | (static_cast<uint32_t>(e[1]) << 8) |
                       (static_cast<uint32_t>(e[2]) << 16) | (static_cast<uint32_t>(e[3]) << 24);
#else
  uint32_t raw;
  std::memcpy(&raw, table + at, 4);
#endif
  return raw & mask;
}

// Bytes taken by values 0..k-1: the sum of their 2-bit codes' lengths (the
// reference sums whole vlen bytes through a table and masks the partial one).
inline uint32_t ValueBytesBefore(const uint8_t* vlen, uint32_t k) {
  uint32_t offset = 0;
  for (uint32_t i = 0; i < k / 4; ++i) offset += kVlenByteSums.sum[vlen[i]];
  const uint32_t shift = 2 * (k & 3);
  return offset + kVlenByteSums.sum[vlen[k / 4] & ((1u << shift) - 1)];
}

// The same for k < 32 without a loop: the first 8 vlen bytes as one word, where a
// field's length is code + (code == 3). Reads 8 bytes (padded memory).
inline uint32_t ValueBytesBefore32(const uint8_t* vlen, uint32_t k) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  uint64_t word = 0;
  for (unsigned i = 0; i < 8; ++i) word |= static_cast<uint64_t>(vlen[i]) << (8 * i);
#else
  uint64_t word;
  std::memcpy(&word, vlen, 8);
#endif
  const uint64_t x = word & ((uint64_t{1} << (2 * k)) - 1);
  const uint64_t threes = x & (x >> 1) & 0x5555555555555555ull;
  uint64_t t = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull) + (threes & 0x3333333333333333ull) +
               ((threes >> 2) & 0x3333333333333333ull);                  // 4-bit fields <= 8
  t = (t & 0x0f0f0f0f0f0f0f0full) + ((t >> 4) & 0x0f0f0f0f0f0f0f0full);  // bytes <= 16
  return static_cast<uint32_t>((t * 0x0101010101010101ull) >> 56);
}

// The point lookup of seed 000 on a validated encoding with kLookupPadding
// owned bytes after it (the addon's copies); pc < size. Branch-light: the
// unpredictable branches (index width, k = 0, the pcs scan) cost more than
// the few extra bytes it reads.
inline int32_t LookupLinearPadded(const uint8_t* table, uint32_t indexBytes, IndexWidth width, uint32_t quantum,
                                  uint32_t pc) {
  const uint32_t quanta = quantum == 1 ? pc : pc / quantum;
  const uint32_t chunkNumber = quanta >> kChunkShift;
  const uint8_t* chunk = table + indexBytes + PaddedIndexEntry(table, width, chunkNumber);
  const uint32_t n = chunk[0];
  const uint8_t* pcs = chunk + 1;
  const uint32_t k = CountAtMost(pcs, n, quanta & (kChunkQuanta - 1));
  const uint8_t* vlen = pcs + n;
  const uint8_t* vals = vlen + (n + 4) / 4;
  const int32_t bias = ReadPaddedValue(vals, vlen[0] & 3);
  const uint32_t offset = k < 32 ? ValueBytesBefore32(vlen, k) : ValueBytesBefore(vlen, k);
  const uint32_t shift = 2 * (k & 3);
  const int32_t delta = ReadPaddedValue(vals + offset, (vlen[k / 4] >> shift) & 3);
  // k = 0 reads vals[0] again; selecting instead of branching avoids a mispredict per lookup.
  return static_cast<int32_t>(static_cast<uint32_t>(bias) + (k != 0 ? static_cast<uint32_t>(delta) : 0u));
}

// A validated linear encoding. Open() checks every byte Lookup() reads.
struct LinearTable {
  const uint8_t* data = nullptr;
  size_t length = 0;
  uint32_t size = 0;  // bytes of PCs covered
  uint32_t quantum = 1;
  uint32_t chunks = 0;
  IndexWidth width = IndexWidth::kNone;
  uint32_t indexBytes = 0;  // chunk index length, marker included

  // Throws FormatError unless every chunk the index reaches lies inside the data
  // with ascending pcs and no 0b00 length code among its n+1 values.
  static LinearTable Open(const uint8_t* data, size_t length, uint32_t size, uint32_t quantum);

  uint32_t ChunkOffset(uint32_t chunk) const { return chunk == 0 ? 0 : ReadIndexEntry(data, width, chunk); }

  // Value at `pc` (pc < size), reading only bytes Open() checked.
  int32_t Lookup(uint32_t pc) const {
    const uint32_t quanta = quantum == 1 ? pc : pc / quantum;
    const uint8_t* chunk = data + indexBytes + ChunkOffset(quanta >> kChunkShift);
    const uint32_t target = quanta & (kChunkQuanta - 1);
    const uint32_t n = chunk[0];
    const uint8_t* pcs = chunk + 1;
    uint32_t k = 0;
    while (k < n && pcs[k] <= target) ++k;
    const uint8_t* vlen = pcs + n;
    const uint8_t* vals = vlen + (n + 4) / 4;
    const int32_t bias = ReadExactValue(vals, vlen[0] & 3);
    if (k == 0) return bias;
    const uint32_t code = (vlen[k / 4] >> (2 * (k & 3))) & 3;
    return static_cast<int32_t>(static_cast<uint32_t>(bias) +
                                static_cast<uint32_t>(ReadExactValue(vals + ValueBytesBefore(vlen, k), code)));
  }

  static int32_t ReadExactValue(const uint8_t* p, uint32_t code) {
    if (code == kLength1) return static_cast<int8_t>(p[0]);
    if (code == kLength2) return static_cast<int16_t>(static_cast<uint16_t>(p[0] | (p[1] << 8)));
    return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                                (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24));
  }
};

}  // namespace pctable
}  // namespace profpack
