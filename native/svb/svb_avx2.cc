// AVX2 kernels: the reference library has none, so this design is ours.
// vpshufb shuffles within each 128-bit half, so one 256-bit shuffle handles
// two groups of four: decode loads group k into the low half and group k+1
// (starting length[key k] bytes later) into the high half; encode packs two
// groups at once and stores each half at its own offset. Control bytes for
// 16 values come from one movemask. Runs of one-byte values skip the tables
// (vpmovzxbd to decode, saturating packs to encode). Measured against SSE4.1
// in bench/RESULTS.md: plain decode is load-bound and barely gains; delta
// decode, 0124 encode and one-byte runs do.
#include "svb/svb_kernels.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <cstring>

#include "svb/svb_scalar.h"
#include "svb/svb_tables.h"

#define PROFPACK_AVX2 __attribute__((target("avx2")))
#define PROFPACK_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline

namespace profpack {
namespace svb {
namespace {

PROFPACK_AVX2_INLINE __m256i Halves(const void* low, const void* high) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(low))),
                                 _mm_loadu_si128(static_cast<const __m128i*>(high)), 1);
}

// Stored values of eight inputs -> inputs; `carry` holds x[-1] in every lane.
template <Transform T>
PROFPACK_AVX2_INLINE __m256i InverseOctet(__m256i v, __m256i& carry) {
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) {
    v = _mm256_xor_si256(_mm256_srli_epi32(v, 1), _mm256_srai_epi32(_mm256_slli_epi32(v, 31), 31));
  }
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    // Prefix sums inside each half, then the low half's total into the high half.
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
    const __m256i halfSums = _mm256_shuffle_epi32(v, 0xFF);
    v = _mm256_add_epi32(v, _mm256_permute2x128_si256(halfSums, halfSums, 0x08));  // [0, low half's sum]
    const __m256i octetSum = _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7));
    v = _mm256_add_epi32(v, carry);
    carry = _mm256_add_epi32(carry, octetSum);  // one add per 8 values on the loop-carried path
  }
  return v;
}

template <Transform T>
PROFPACK_AVX2_INLINE __m128i InverseGroup(__m128i v, __m128i& carry) {
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) {
    v = _mm_xor_si128(_mm_srli_epi32(v, 1), _mm_srai_epi32(_mm_slli_epi32(v, 31), 31));
  }
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    v = _mm_add_epi32(v, _mm_slli_si128(v, 4));
    v = _mm_add_epi32(v, _mm_slli_si128(v, 8));
    const __m128i groupSum = _mm_shuffle_epi32(v, 0xFF);
    v = _mm_add_epi32(v, carry);
    carry = _mm_add_epi32(carry, groupSum);
  }
  return v;
}

template <Variant V, Transform T>
PROFPACK_AVX2 size_t DecodeAvx2(const uint8_t* in, size_t size, size_t n, uint32_t* out, uint32_t prev) {
  const size_t controlLength = ControlLength(n);
  if (size < controlLength) ThrowControlTruncated(size, n);
  const ShuffleTables& tables = TablesOf<V>();
  const size_t groups = n / 4;
  size_t pos = controlLength;
  size_t g = 0;
  __m256i carry = _mm256_set1_epi32(static_cast<int>(prev));
  // As in the SSE4.1 kernel: eight groups read at most 128 bytes from pos.
  for (; g + 8 <= groups && size - pos >= 128; g += 8) {
    uint64_t keys;
    std::memcpy(&keys, in + g, 8);
    if (V == Variant::k1234 && keys == 0) {
      // 32 one-byte values: widen 8 bytes at a time into lanes (vpmovzxbd).
      for (unsigned k = 0; k < 8; k += 2) {
        const __m128i eight = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + pos + 4 * k));
        const __m256i v = InverseOctet<T>(_mm256_cvtepu8_epi32(eight), carry);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4 * (g + k)), v);
      }
      pos += 32;
      continue;
    }
    for (unsigned k = 0; k < 8; k += 2, keys >>= 16) {
      const unsigned key0 = keys & 0xFF;
      const unsigned key1 = (keys >> 8) & 0xFF;
      const size_t length0 = tables.groupLength[key0];
      const __m256i bytes = Halves(in + pos, in + pos + length0);
      const __m256i masks = Halves(tables.decode[key0], tables.decode[key1]);
      pos += length0 + tables.groupLength[key1];
      const __m256i v = InverseOctet<T>(_mm256_shuffle_epi8(bytes, masks), carry);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4 * (g + k)), v);
    }
  }
  __m128i carry128 = _mm256_castsi256_si128(carry);
  for (; g < groups && size - pos >= 16; ++g) {
    const unsigned key = in[g];
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + pos));
    const __m128i v = _mm_shuffle_epi8(bytes, _mm_load_si128(reinterpret_cast<const __m128i*>(tables.decode[key])));
    pos += tables.groupLength[key];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * g), InverseGroup<T>(v, carry128));
  }
  return DecodeScalarFrom<V, T>(in, size, n, 4 * g, pos, out, static_cast<uint32_t>(_mm_cvtsi128_si32(carry128)));
}

// Inputs of eight values -> stored values; `last` holds the previous eight (x[-1] in lane 7).
template <Transform T>
PROFPACK_AVX2_INLINE __m256i ForwardOctet(__m256i x, __m256i& last) {
  __m256i d = x;
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    // [last.high, x.low], then per half a 12-byte alignr: [last7, x0, x1, x2 | x3, x4, x5, x6].
    const __m256i straddle = _mm256_permute2x128_si256(last, x, 0x21);
    d = _mm256_sub_epi32(x, _mm256_alignr_epi8(x, straddle, 12));
    last = x;
  }
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) {
    d = _mm256_xor_si256(_mm256_slli_epi32(d, 1), _mm256_srai_epi32(d, 31));
  }
  return d;
}

// Packs the two groups of `v` (control bytes key0, key1) and stores each
// 16-byte half at its offset. Full groups only: group j starts at most
// ControlLength(n) + 16*j, so each store ends inside MaxEncodedLength(n).
template <Variant V>
PROFPACK_AVX2_INLINE size_t StoreOctet(__m256i v, unsigned key0, unsigned key1, uint8_t* out, size_t pos) {
  const ShuffleTables& tables = TablesOf<V>();
  const __m256i packed = _mm256_shuffle_epi8(v, Halves(tables.encode[key0 & 63], tables.encode[key1 & 63]));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pos), _mm256_castsi256_si128(packed));
  pos += tables.groupLength[key0];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pos), _mm256_extracti128_si256(packed, 1));
  return pos + tables.groupLength[key1];
}

// 1234 control bytes of 16 values. The pack works per 128-bit half, leaving
// the 64-bit quarters as [a0-3, b0-3, a4-7, b4-7]; one vpermq restores value
// order before the movemask, which then yields four control bytes.
PROFPACK_AVX2_INLINE __m256i NonzeroBytes(__m256i a, __m256i b) {
  const __m256i ones = _mm256_set1_epi8(1);
  const __m256i m = _mm256_packus_epi16(_mm256_min_epu8(a, ones), _mm256_min_epu8(b, ones));
  return _mm256_permute4x64_epi64(m, 0xD8);
}

template <Variant V>
PROFPACK_AVX2_INLINE uint32_t Keys(__m256i a, __m256i b) {
  __m256i m = NonzeroBytes(a, b);
  if (V == Variant::k1234) {
    m = _mm256_min_epi16(m, _mm256_set1_epi16(0x0101));
    m = _mm256_adds_epu16(m, _mm256_set1_epi16(0x7F00));
  } else {
    // As Keys0124 of the SSE4.1 kernels: 0, 1, 0xFF, >= 0x100 -> 0, 1, 0xFF,
    // 0x101 -> times 0xC0: sign bits equal to the 0124 code.
    m = _mm256_min_epu16(m, _mm256_set1_epi16(0x0100));
    m = _mm256_or_si256(m, _mm256_srli_epi16(m, 8));
    m = _mm256_mullo_epi16(m, _mm256_set1_epi16(0x00C0));
  }
  return static_cast<uint32_t>(_mm256_movemask_epi8(m));
}

template <Variant V, Transform T>
PROFPACK_AVX2 size_t EncodeAvx2(const uint32_t* in, size_t n, uint8_t* out, uint32_t prev) {
  size_t pos = ControlLength(n);
  __m256i last = _mm256_set1_epi32(static_cast<int>(prev));
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = ForwardOctet<T>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)), last);
    const __m256i b = ForwardOctet<T>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 8)), last);
    const uint32_t keys = Keys<V>(a, b);
    out[i / 4] = static_cast<uint8_t>(keys);
    out[i / 4 + 1] = static_cast<uint8_t>(keys >> 8);
    out[i / 4 + 2] = static_cast<uint8_t>(keys >> 16);
    out[i / 4 + 3] = static_cast<uint8_t>(keys >> 24);
    if (V == Variant::k0124 && keys == 0) continue;  // sixteen zeros take no data bytes
    if (V == Variant::k1234 && keys == 0) {
      // Sixteen one-byte values: narrow with saturating packs (all are below
      // 256); the packs work per 128-bit half, so one vpermd restores order.
      const __m256i words = _mm256_packus_epi32(a, b);          // [a0-3 b0-3 | a4-7 b4-7]
      const __m256i bytes = _mm256_packus_epi16(words, words);  // [a0-3 b0-3 a0-3 b0-3 | a4-7 b4-7 ...]
      const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pos), _mm256_castsi256_si128(ordered));
      pos += 16;
      continue;
    }
    pos = StoreOctet<V>(a, keys & 0xFF, (keys >> 8) & 0xFF, out, pos);
    pos = StoreOctet<V>(b, (keys >> 16) & 0xFF, keys >> 24, out, pos);
  }
  return EncodeScalarFrom<V, T>(in, i, n, out, out, pos, PrevAt(in, i, prev));
}

const Kernels kAvx2 = PROFPACK_SVB_KERNELS(SimdLevel::kAvx2, EncodeAvx2, DecodeAvx2);

}  // namespace

const Kernels* Avx2Kernels() { return &kAvx2; }

}  // namespace svb
}  // namespace profpack

#else

namespace profpack {
namespace svb {
const Kernels* Avx2Kernels() { return nullptr; }
}  // namespace svb
}  // namespace profpack

#endif
