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
#include <vector>

#include "pctable/format.h"
#include "pctable/varint_table.h"

namespace profpack {
namespace pctable {

enum class IndexWidth : uint8_t { kNone = 0, kU8 = 1, kU16 = 2, kU32 = 4 };

// Byte length of one value for each 2-bit code (0b00 is unused: 0 bytes).
inline constexpr uint8_t kValueBytes[4] = {0, 1, 2, 4};

// Sum of the value lengths of the four codes packed in one vlen byte: the
// reference's trick of summing whole vlen bytes, with unused fields masked to 0b00.
struct VlenByteSums {
  uint8_t sum[256];
  constexpr VlenByteSums() : sum() {
    for (unsigned b = 0; b < 256; ++b) {
      sum[b] = static_cast<uint8_t>(kValueBytes[b & 3] + kValueBytes[(b >> 2) & 3] + kValueBytes[(b >> 4) & 3] + kValueBytes[b >> 6]);
    }
  }
};
inline constexpr VlenByteSums kVlenByteSums{};

// Encodes a decoded varint table covering `sizeBytes` (a multiple of quantum,
// equal to the runs' end). Chooses widths exactly as the reference does.
std::vector<uint8_t> EncodeLinear(const std::vector<VarintRun>& runs, uint32_t sizeBytes, uint32_t quantum);

// A validated linear encoding. Lookup reads only bytes Open() checked.
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

  uint32_t ChunkOffset(uint32_t chunk) const {
    if (chunk == 0) return 0;
    const uint8_t* entry;
    switch (width) {
      case IndexWidth::kU8:
        return data[chunk - 1];
      case IndexWidth::kU16:
        entry = data + 1 + 2 * static_cast<size_t>(chunk - 1);
        return static_cast<uint32_t>(entry[0]) | (static_cast<uint32_t>(entry[1]) << 8);
      case IndexWidth::kU32:
        entry = data + 1 + 4 * static_cast<size_t>(chunk - 1);
        return static_cast<uint32_t>(entry[0]) | (static_cast<uint32_t>(entry[1]) << 8) |
               (static_cast<uint32_t>(entry[2]) << 16) | (static_cast<uint32_t>(entry[3]) << 24);
      default:
        return 0;
    }
  }

  // Value at `pc`; the caller guarantees pc < size.
  int32_t Lookup(uint32_t pc) const {
    const uint32_t quanta = quantum == 1 ? pc : pc / quantum;
    const uint8_t* chunk = data + indexBytes + ChunkOffset(quanta >> kChunkShift);
    const uint32_t target = quanta & (kChunkQuanta - 1);
    const uint32_t n = chunk[0];
    const uint8_t* pcs = chunk + 1;
    // k = how many change points are <= target (pcs ascend).
    uint32_t k = 0;
    while (k < n && pcs[k] <= target) ++k;
    const uint8_t* vlen = pcs + n;
    const uint8_t* vals = vlen + (n + 4) / 4;
    const int32_t bias = ReadValue(vals, vlen[0] & 3);
    if (k == 0) return bias;
    uint32_t offset = 0;
    for (uint32_t i = 0; i < k / 4; ++i) offset += kVlenByteSums.sum[vlen[i]];
    const uint32_t partial = k & 3;
    const uint8_t last = vlen[k / 4];
    offset += kVlenByteSums.sum[last & ((1u << (2 * partial)) - 1)];
    const uint32_t code = (last >> (2 * partial)) & 3;
    return static_cast<int32_t>(static_cast<uint32_t>(bias) + static_cast<uint32_t>(ReadValue(vals + offset, code)));
  }

  static int32_t ReadValue(const uint8_t* p, uint32_t code) {
    switch (code) {
      case kLength1:
        return static_cast<int8_t>(p[0]);
      case kLength2:
        return static_cast<int16_t>(static_cast<uint16_t>(p[0] | (p[1] << 8)));
      default:
        return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                                    (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24));
    }
  }
};

}  // namespace pctable
}  // namespace profpack
