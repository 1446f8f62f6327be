// SSE4.1 kernels, 128 bits wide: pshufb/palignr (SSSE3) for the groups,
// pminuw (SSE4.1) for 0124 codes, pmovzxbd/packusdw (SSE4.1) for the
// one-byte fast paths. Techniques from
// shared/notes/streamvbyte.md section 5; the code is ours.
#include "svb/svb_kernels.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <cstring>

#include "svb/svb_scalar.h"
#include "svb/svb_tables.h"

#define PROFPACK_SSE41 __attribute__((target("sse4.1")))
#define PROFPACK_SSE41_INLINE __attribute__((target("sse4.1"), always_inline)) inline

namespace profpack {
namespace svb {
namespace {

// Stored values of one group -> inputs; `carry` holds x[-1] in every lane.
template <Transform T>
PROFPACK_SSE41_INLINE __m128i InverseGroup(__m128i v, __m128i& carry) {
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) {
    v = _mm_xor_si128(_mm_srli_epi32(v, 1), _mm_srai_epi32(_mm_slli_epi32(v, 31), 31));
  }
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    v = _mm_add_epi32(v, _mm_slli_si128(v, 4));
    v = _mm_add_epi32(v, _mm_slli_si128(v, 8));
    // The group's sum joins the carry off the critical path: the only
    // loop-carried dependency is one add per group.
    const __m128i groupSum = _mm_shuffle_epi32(v, 0xFF);
    v = _mm_add_epi32(v, carry);
    carry = _mm_add_epi32(carry, groupSum);
  }
  return v;
}

// Inputs of one group -> stored values; `last` holds the previous group (x[-1] in lane 3).
template <Transform T>
PROFPACK_SSE41_INLINE __m128i ForwardGroup(__m128i x, __m128i& last) {
  __m128i d = x;
  if (T == Transform::kDelta || T == Transform::kZigzagDelta) {
    d = _mm_sub_epi32(x, _mm_alignr_epi8(x, last, 12));  // x - [last3, x0, x1, x2]
    last = x;
  }
  if (T == Transform::kZigzag || T == Transform::kZigzagDelta) {
    d = _mm_xor_si128(_mm_slli_epi32(d, 1), _mm_srai_epi32(d, 31));
  }
  return d;
}

template <Variant V>
PROFPACK_SSE41_INLINE __m128i LoadShuffled(const uint8_t* data, unsigned key) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data));
  return _mm_shuffle_epi8(bytes, _mm_load_si128(reinterpret_cast<const __m128i*>(TablesOf<V>().decode[key])));
}

template <Variant V, Transform T>
PROFPACK_SSE41 size_t DecodeSse41(const uint8_t* in, size_t size, size_t n, uint32_t* out, uint32_t prev) {
  const size_t controlLength = ControlLength(n);
  if (size < controlLength) ThrowControlTruncated(size, n);
  const ShuffleTables& tables = TablesOf<V>();
  const size_t groups = n / 4;
  size_t pos = controlLength;
  size_t g = 0;
  __m128i carry = _mm_set1_epi32(static_cast<int>(prev));
  // Eight groups load at most 8 * 16 bytes from pos: with 128 bytes left, no
  // 16-byte load can cross the end of the stream.
  for (; g + 8 <= groups && size - pos >= 128; g += 8) {
    uint64_t keys;
    std::memcpy(&keys, in + g, 8);
    if (V == Variant::k1234 && keys == 0) {
      // 32 one-byte values (small values, sorted deltas): widen the bytes
      // straight into lanes (pmovzxbd), with no table rows or lengths.
      for (unsigned k = 0; k < 8; ++k) {
        int32_t four;
        std::memcpy(&four, in + pos + 4 * k, 4);
        const __m128i v = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(four));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * (g + k)), InverseGroup<T>(v, carry));
      }
      pos += 32;
      continue;
    }
    for (unsigned k = 0; k < 8; ++k, keys >>= 8) {
      const unsigned key = keys & 0xFF;
      __m128i v = LoadShuffled<V>(in + pos, key);
      pos += tables.groupLength[key];
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * (g + k)), InverseGroup<T>(v, carry));
    }
  }
  for (; g < groups && size - pos >= 16; ++g) {
    const unsigned key = in[g];
    __m128i v = LoadShuffled<V>(in + pos, key);
    pos += tables.groupLength[key];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * g), InverseGroup<T>(v, carry));
  }
  return DecodeScalarFrom<V, T>(in, size, n, 4 * g, pos, out, static_cast<uint32_t>(_mm_cvtsi128_si32(carry)));
}

// Control bits of 8 values (two groups) in the 1234 layout, as the two control
// bytes in stream order (low byte first). The byte-min / saturating-pack /
// signed-min / saturating-add sequence puts each value's code bits into the
// sign bits of two bytes; see shared/notes/streamvbyte.md section 5.
PROFPACK_SSE41_INLINE unsigned Keys1234(__m128i a, __m128i b) {
  const __m128i ones = _mm_set1_epi8(1);
  __m128i m = _mm_packus_epi16(_mm_min_epu8(a, ones), _mm_min_epu8(b, ones));
  m = _mm_min_epi16(m, _mm_set1_epi16(0x0101));
  m = _mm_adds_epu16(m, _mm_set1_epi16(0x7F00));
  return static_cast<unsigned>(_mm_movemask_epi8(m));
}

// 0124 codes of 8 values, as the two control bytes. After the same byte-min
// and saturating pack as 1234, each value is a word [L, H] with L, H in
// {0, 1, 0xFF}: 0 for the value 0 (code 0), 0x0001 below 256 (code 1), 0x00FF
// below 65536 (code 2), and at least 0x0100 otherwise (code 3). An unsigned
// min with 0x0100 and or-ing in the high byte make that 0, 1, 0xFF, 0x0101;
// times 0xC0 (mod 2^16) that is 0, 0x00C0, 0xBF40, 0xC0C0, whose two sign
// bits are exactly the code.
PROFPACK_SSE41_INLINE unsigned Keys0124(__m128i a, __m128i b) {
  const __m128i ones = _mm_set1_epi8(1);
  __m128i m = _mm_packus_epi16(_mm_min_epu8(a, ones), _mm_min_epu8(b, ones));
  m = _mm_min_epu16(m, _mm_set1_epi16(0x0100));
  m = _mm_or_si128(m, _mm_srli_epi16(m, 8));
  m = _mm_mullo_epi16(m, _mm_set1_epi16(0x00C0));
  return static_cast<unsigned>(_mm_movemask_epi8(m));
}

// Packs one group by its control byte and stores 16 bytes at out + pos.
// Full groups only: group j starts at most ControlLength(n) + 16*j, so the
// store ends inside MaxEncodedLength(n).
template <Variant V>
PROFPACK_SSE41_INLINE size_t StoreGroup(__m128i v, unsigned key, uint8_t* out, size_t pos) {
  const ShuffleTables& tables = TablesOf<V>();
  const __m128i packed = _mm_shuffle_epi8(v, _mm_load_si128(reinterpret_cast<const __m128i*>(tables.encode[key & 63])));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pos), packed);
  return pos + tables.groupLength[key];
}

template <Variant V, Transform T>
PROFPACK_SSE41 size_t EncodeSse41(const uint32_t* in, size_t n, uint8_t* out, uint32_t prev) {
  size_t pos = ControlLength(n);
  __m128i last = _mm_set1_epi32(static_cast<int>(prev));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i a = ForwardGroup<T>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)), last);
    const __m128i b = ForwardGroup<T>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 4)), last);
    const unsigned keys = V == Variant::k1234 ? Keys1234(a, b) : Keys0124(a, b);
    out[i / 4] = static_cast<uint8_t>(keys);
    out[i / 4 + 1] = static_cast<uint8_t>(keys >> 8);
    if (V == Variant::k0124 && keys == 0) continue;  // eight zeros take no data bytes
    if (V == Variant::k1234 && keys == 0) {
      // Eight one-byte values: narrow them with two saturating packs (no
      // saturation happens, all are below 256) and store 8 bytes.
      const __m128i words = _mm_packus_epi32(a, b);
      const __m128i bytes = _mm_packus_epi16(words, words);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + pos), bytes);
      pos += 8;
      continue;
    }
    pos = StoreGroup<V>(a, keys & 0xFF, out, pos);
    pos = StoreGroup<V>(b, keys >> 8, out, pos);
  }
  return EncodeScalarFrom<V, T>(in, i, n, out, out, pos, PrevAt(in, i, prev));
}

const Kernels kSse41 = PROFPACK_SVB_KERNELS(SimdLevel::kSse41, EncodeSse41, DecodeSse41);

}  // namespace

const Kernels* Sse41Kernels() { return &kSse41; }

}  // namespace svb
}  // namespace profpack

#else

namespace profpack {
namespace svb {
const Kernels* Sse41Kernels() { return nullptr; }
}  // namespace svb
}  // namespace profpack

#endif
