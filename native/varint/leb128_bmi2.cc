// The batch u32 LEB128 kernels and their choice per SIMD level. BMI2: pext
// gathers the end flags of 8 bytes and the 7-bit groups of a value in one
// instruction each. Only chosen where pext is fast (SimdLevelUsesPext: it is
// microcoded and slow on AMD before Zen 3).
#include "varint/leb128.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

namespace profpack {
namespace leb128 {
namespace {

struct Bmi2Kernel {
  __attribute__((target("bmi2"))) static uint64_t EndsOf8(uint64_t word) {
    return _pext_u64(~word, 0x8080808080808080ull);
  }
  __attribute__((target("bmi2"))) static uint64_t Extract(uint64_t word, size_t length) {
    return _pext_u64(_bzhi_u64(word, static_cast<unsigned>(8 * length)), 0x7f7f7f7f7full);
  }
};

}  // namespace

// flatten: the batch template is not itself a bmi2 function, so without it GCC
// keeps each pext in an out-of-line call (target mismatch) and loses ~2x.
__attribute__((target("bmi2"), flatten)) size_t DecodeU32BatchBmi2(const uint8_t* data, size_t size, size_t pos,
                                                                   size_t count, uint32_t* out) {
  return DecodeU32BatchWith<Bmi2Kernel, false>(data, size, pos, count, out);
}

__attribute__((target("bmi2"), flatten)) size_t DecodeZigzag32BatchBmi2(const uint8_t* data, size_t size, size_t pos,
                                                                        size_t count, int32_t* out) {
  return DecodeU32BatchWith<Bmi2Kernel, true>(data, size, pos, count, out);
}

}  // namespace leb128
}  // namespace profpack

#else

namespace profpack {
namespace leb128 {
size_t DecodeU32BatchBmi2(const uint8_t* data, size_t size, size_t pos, size_t count, uint32_t* out) {
  return DecodeU32BatchWith<PortableKernel, false>(data, size, pos, count, out);
}
size_t DecodeZigzag32BatchBmi2(const uint8_t* data, size_t size, size_t pos, size_t count, int32_t* out) {
  return DecodeU32BatchWith<PortableKernel, true>(data, size, pos, count, out);
}
}  // namespace leb128
}  // namespace profpack

#endif

namespace profpack {
namespace leb128 {
namespace {

size_t DecodeU32BatchPortable(const uint8_t* data, size_t size, size_t pos, size_t count, uint32_t* out) {
  return DecodeU32BatchWith<PortableKernel, false>(data, size, pos, count, out);
}

size_t DecodeZigzag32BatchPortable(const uint8_t* data, size_t size, size_t pos, size_t count, int32_t* out) {
  return DecodeU32BatchWith<PortableKernel, true>(data, size, pos, count, out);
}

constexpr BatchKernels kPortable = {"portable", DecodeU32BatchPortable, DecodeZigzag32BatchPortable};
constexpr BatchKernels kBmi2 = {"bmi2", DecodeU32BatchBmi2, DecodeZigzag32BatchBmi2};

}  // namespace

const BatchKernels& BatchKernelsFor(SimdLevel level) {
  return SimdLevelUsesPext(level, DetectedCpuFeatures()) ? kBmi2 : kPortable;
}

}  // namespace leb128
}  // namespace profpack
