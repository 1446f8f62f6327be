// Scalar kernels: the fallback on CPUs without SSE4.1 and the reference the
// SIMD kernels are tested against.
#include "svb/svb_kernels.h"
#include "svb/svb_scalar.h"

namespace profpack {
namespace svb {
namespace {

template <Variant V, Transform T>
size_t EncodeScalar(const uint32_t* in, size_t n, uint8_t* out, uint32_t prev) {
  return EncodeScalarFrom<V, T>(in, 0, n, out, out, ControlLength(n), prev);
}

template <Variant V, Transform T>
size_t DecodeScalar(const uint8_t* in, size_t size, size_t n, uint32_t* out, uint32_t prev) {
  if (size < ControlLength(n)) ThrowControlTruncated(size, n);
  return DecodeScalarFrom<V, T>(in, size, n, 0, ControlLength(n), out, prev);
}

constexpr Variant k1234 = Variant::k1234;

const Kernels kScalar = {
    SimdLevel::kScalar,
    {EncodeScalar<k1234, Transform::kPlain>, EncodeScalar<k1234, Transform::kDelta>,
     EncodeScalar<k1234, Transform::kZigzag>, EncodeScalar<k1234, Transform::kZigzagDelta>},
    {DecodeScalar<k1234, Transform::kPlain>, DecodeScalar<k1234, Transform::kDelta>,
     DecodeScalar<k1234, Transform::kZigzag>, DecodeScalar<k1234, Transform::kZigzagDelta>},
    EncodeScalar<Variant::k0124, Transform::kPlain>,
    DecodeScalar<Variant::k0124, Transform::kPlain>,
};

}  // namespace

const Kernels& ScalarKernels() { return kScalar; }

}  // namespace svb
}  // namespace profpack
