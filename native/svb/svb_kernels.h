// One set of Stream VByte kernels per SIMD level. Each SIMD kernel is a whole
// loop inside one function compiled for its target (__attribute__((target)))
// so the addon still runs on CPUs without it; the level is picked once
// (common/simd_level.h). All kernels of a set produce identical bytes.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/simd_level.h"
#include "svb/svb_format.h"

namespace profpack {
namespace svb {

// Encodes n values into `out`, which holds at least MaxEncodedLength(n)
// bytes; returns the encoded length. Bytes between that length and
// MaxEncodedLength(n) may be overwritten with scratch.
using EncodeFn = size_t (*)(const uint32_t* in, size_t n, uint8_t* out, uint32_t prev);

// Decodes n values from in[0..size) into out[0..n); returns the bytes the
// stream took. Reads only in[0..size); throws FormatError ERR_SVB_TRUNCATED
// when the control bytes ask for more (out may then be partly written).
using DecodeFn = size_t (*)(const uint8_t* in, size_t size, size_t n, uint32_t* out, uint32_t prev);

struct Kernels {
  SimdLevel level;
  EncodeFn encode1234[4];  // indexed by Transform
  DecodeFn decode1234[4];
  EncodeFn encode0124;
  DecodeFn decode0124;
};

// The Kernels of one level from its function templates Encode<Variant, Transform>
// and Decode<Variant, Transform> (a macro: a function template cannot be a template argument).
#define PROFPACK_SVB_KERNELS(level, Encode, Decode)                                                    \
  {                                                                                                    \
    level,                                                                                             \
        {Encode<Variant::k1234, Transform::kPlain>, Encode<Variant::k1234, Transform::kDelta>,         \
         Encode<Variant::k1234, Transform::kZigzag>, Encode<Variant::k1234, Transform::kZigzagDelta>}, \
        {Decode<Variant::k1234, Transform::kPlain>, Decode<Variant::k1234, Transform::kDelta>,         \
         Decode<Variant::k1234, Transform::kZigzag>, Decode<Variant::k1234, Transform::kZigzagDelta>}, \
        Encode<Variant::k0124, Transform::kPlain>, Decode<Variant::k0124, Transform::kPlain>,          \
  }

const Kernels& ScalarKernels();
// nullptr when the addon was built for a CPU family without these kernels.
const Kernels* Sse41Kernels();
const Kernels* Avx2Kernels();
const Kernels* NeonKernels();

// The kernels of `level`, or nullptr when they were not compiled in.
inline const Kernels* KernelsFor(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx2: return Avx2Kernels();
    case SimdLevel::kSse41: return Sse41Kernels();
    case SimdLevel::kNeon: return NeonKernels();
    case SimdLevel::kScalar: break;
  }
  return &ScalarKernels();
}

}  // namespace svb
}  // namespace profpack
