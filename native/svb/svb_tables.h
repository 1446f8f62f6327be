// Lookup tables of the SIMD kernels, computed at compile time from the code
// lengths so that they cannot disagree with the scalar definition.
#pragma once
#include <cstdint>

#include "svb/svb_format.h"

namespace profpack {
namespace svb {

struct ShuffleTables {
  // pshufb masks that spread one group's packed bytes into four uint32 lanes,
  // indexed by the control byte; 0x80 zeroes a byte.
  alignas(16) uint8_t decode[256][16];
  // pshufb masks that pack four uint32 lanes into the group's bytes, indexed
  // by the codes of lanes 0..2 (control byte & 63). Lane 3 always copies all
  // four bytes: whatever it writes beyond the group's length is overwritten by
  // the next group or lies past the end of the stream (but inside a buffer of
  // MaxEncodedLength, see the kernels).
  alignas(16) uint8_t encode[64][16];
  // Data bytes of a group of four, indexed by the control byte.
  uint8_t groupLength[256];
};

template <Variant V>
constexpr ShuffleTables MakeShuffleTables() {
  ShuffleTables t{};
  for (unsigned key = 0; key < 256; ++key) {
    unsigned offset = 0;
    for (unsigned lane = 0; lane < 4; ++lane) {
      const unsigned length = CodeLength<V>((key >> (2 * lane)) & 3);
      for (unsigned b = 0; b < 4; ++b)
        t.decode[key][4 * lane + b] = b < length ? static_cast<uint8_t>(offset + b) : 0x80;
      offset += length;
    }
    t.groupLength[key] = static_cast<uint8_t>(offset);
  }
  for (unsigned key = 0; key < 64; ++key) {
    for (unsigned i = 0; i < 16; ++i) t.encode[key][i] = 0x80;
    unsigned offset = 0;
    for (unsigned lane = 0; lane < 4; ++lane) {
      const unsigned length = lane < 3 ? CodeLength<V>((key >> (2 * lane)) & 3) : 4;
      for (unsigned b = 0; b < length; ++b) t.encode[key][offset + b] = static_cast<uint8_t>(4 * lane + b);
      offset += length;
    }
  }
  return t;
}

inline constexpr ShuffleTables kTables1234 = MakeShuffleTables<Variant::k1234>();
inline constexpr ShuffleTables kTables0124 = MakeShuffleTables<Variant::k0124>();

template <Variant V>
constexpr const ShuffleTables& TablesOf() {
  return V == Variant::k1234 ? kTables1234 : kTables0124;
}

}  // namespace svb
}  // namespace profpack
