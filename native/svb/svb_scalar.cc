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

const Kernels kScalar = PROFPACK_SVB_KERNELS(SimdLevel::kScalar, EncodeScalar, DecodeScalar);

}  // namespace

const Kernels& ScalarKernels() { return kScalar; }

}  // namespace svb
}  // namespace profpack
