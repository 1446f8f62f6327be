// NEON kernels (AArch64 Advanced SIMD), 128 bits wide like SSE4.1. TBL does
// what pshufb does with the same tables (an index >= 16, our 0x80, gives 0).
// NEON has no movemask, so control bytes come from compares: a lane's code is
// how many thresholds it exceeds (each true compare is all ones, i.e. -1),
// shifted into its 2-bit slot and summed across lanes. Compiled only for
// arm64, where every CPU has NEON; elsewhere NeonKernels() is nullptr.
#include "svb/svb_kernels.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include "svb/svb_scalar.h"
#include "svb/svb_tables.h"

namespace profpack {
namespace svb {
namespace {

// Stored values of one group -> inputs; `carry` holds x[-1] in every lane.
template <Transform T>
inline uint32x4_t InverseGroup(uint32x4_t v, uint32x4_t& carry) {
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) {
    const int32x4_t sign = vnegq_s32(vreinterpretq_s32_u32(vandq_u32(v, vdupq_n_u32(1))));
    v = veorq_u32(vshrq_n_u32(v, 1), vreinterpretq_u32_s32(sign));
  }
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    const uint32x4_t zero = vdupq_n_u32(0);
    v = vaddq_u32(v, vextq_u32(zero, v, 3));  // + [0, v0, v1, v2]
    v = vaddq_u32(v, vextq_u32(zero, v, 2));  // + [0, 0, s0, s1]
    v = vaddq_u32(v, carry);
    carry = vdupq_laneq_u32(v, 3);
  }
  return v;
}

// Inputs of one group -> stored values; `last` holds the previous group (x[-1] in lane 3).
template <Transform T>
inline uint32x4_t ForwardGroup(uint32x4_t x, uint32x4_t& last) {
  uint32x4_t d = x;
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    d = vsubq_u32(x, vextq_u32(last, x, 3));  // x - [last3, x0, x1, x2]
    last = x;
  }
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) {
    const uint32x4_t sign = vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_u32(d), 31));
    d = veorq_u32(vshlq_n_u32(d, 1), sign);
  }
  return d;
}

// The control byte of one group: code = thresholds exceeded, 1234 counts
// > 0xFF, > 0xFFFF, > 0xFFFFFF; 0124 counts > 0, > 0xFF, > 0xFFFF.
template <Variant V>
inline unsigned Key(uint32x4_t v) {
  constexpr uint32_t t0 = V == Variant::k1234 ? 0xFFu : 0u;
  constexpr uint32_t t1 = V == Variant::k1234 ? 0xFFFFu : 0xFFu;
  constexpr uint32_t t2 = V == Variant::k1234 ? 0xFFFFFFu : 0xFFFFu;
  const uint32x4_t minusCode =
      vaddq_u32(vaddq_u32(vcgtq_u32(v, vdupq_n_u32(t0)), vcgtq_u32(v, vdupq_n_u32(t1))), vcgtq_u32(v, vdupq_n_u32(t2)));
  const uint32x4_t code = vreinterpretq_u32_s32(vnegq_s32(vreinterpretq_s32_u32(minusCode)));
  static const int32_t kSlots[4] = {0, 2, 4, 6};
  return vaddvq_u32(vshlq_u32(code, vld1q_s32(kSlots)));
}

template <Variant V, Transform T>
size_t DecodeNeon(const uint8_t* in, size_t size, size_t n, uint32_t* out, uint32_t prev) {
  const size_t controlLength = ControlLength(n);
  if (size < controlLength) ThrowControlTruncated(size, n);
  const ShuffleTables& tables = TablesOf<V>();
  const size_t groups = n / 4;
  size_t pos = controlLength;
  size_t g = 0;
  uint32x4_t carry = vdupq_n_u32(prev);
  // A group takes at most 16 bytes: with 16 left its load stays inside the stream.
  for (; g < groups && size - pos >= 16; ++g) {
    const unsigned key = in[g];
    const uint8x16_t bytes = vqtbl1q_u8(vld1q_u8(in + pos), vld1q_u8(tables.decode[key]));
    pos += tables.groupLength[key];
    vst1q_u32(out + 4 * g, InverseGroup<T>(vreinterpretq_u32_u8(bytes), carry));
  }
  return DecodeScalarFrom<V, T>(in, size, n, 4 * g, pos, out, vgetq_lane_u32(carry, 0));
}

template <Variant V, Transform T>
size_t EncodeNeon(const uint32_t* in, size_t n, uint8_t* out, uint32_t prev) {
  const ShuffleTables& tables = TablesOf<V>();
  size_t pos = ControlLength(n);
  uint32x4_t last = vdupq_n_u32(prev);
  size_t i = 0;
  // Full groups only: group j starts at most ControlLength(n) + 16*j, so its
  // 16-byte store ends inside MaxEncodedLength(n).
  for (; i + 4 <= n; i += 4) {
    const uint32x4_t d = ForwardGroup<T>(vld1q_u32(in + i), last);
    const unsigned key = Key<V>(d);
    out[i / 4] = static_cast<uint8_t>(key);
    vst1q_u8(out + pos, vqtbl1q_u8(vreinterpretq_u8_u32(d), vld1q_u8(tables.encode[key & 63])));
    pos += tables.groupLength[key];
  }
  return EncodeScalarFrom<V, T>(in, i, n, out, out, pos, PrevAt(in, i, prev));
}

const Kernels kNeon = PROFPACK_SVB_KERNELS(SimdLevel::kNeon, EncodeNeon, DecodeNeon);

}  // namespace

const Kernels* NeonKernels() { return &kNeon; }

}  // namespace svb
}  // namespace profpack

#else

namespace profpack {
namespace svb {
const Kernels* NeonKernels() { return nullptr; }
}  // namespace svb
}  // namespace profpack

#endif
