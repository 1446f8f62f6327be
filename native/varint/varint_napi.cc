// N-API glue for batch LEB128: decode n values into a typed array, or encode a
// typed array, in one crossing. Kinds match lib/varint/native.ts. The u32
// kernels are the SIMD level's (leb128::BatchKernelsFor), picked at load and
// when the setKernelLevel test hook switches the level.
#include <napi.h>
#include <cstring>

#include "common/errors.h"
#include "common/module_registry.h"
#include "common/typed_array.h"
#include "varint/leb128.h"

namespace profpack {
namespace {

const leb128::BatchKernels* g_kernels = nullptr;

void UseLevel(SimdLevel level) { g_kernels = &leb128::BatchKernelsFor(level); }

enum Kind : uint32_t { kU32 = 0, kU64 = 1, kZigzag32 = 2, kI64 = 3, kI32 = 4, kZigzag64 = 5 };

napi_typedarray_type ArrayTypeOf(uint32_t kind) {
  switch (kind) {
    case kU32: return napi_uint32_array;
    case kU64: return napi_biguint64_array;
    case kZigzag32:
    case kI32: return napi_int32_array;
    case kI64:
    case kZigzag64: return napi_bigint64_array;
  }
  return napi_uint8_array;
}

uint32_t KindArg(const Napi::CallbackInfo& info) {
  const uint32_t kind = info[0].As<Napi::Number>().Uint32Value();
  if (kind > kZigzag64) throw Napi::RangeError::New(info.Env(), "unknown varint kind");
  return kind;
}

// decodeMany(kind, bytes, offset, count, out) -> offset after the last value
Napi::Value DecodeMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint32_t kind = KindArg(info);
  const RawView in = ViewOfType(info[1], napi_uint8_array, "bytes");
  size_t pos = IndexArg(info, 2, "offset");
  const size_t count = IndexArg(info, 3, "count");
  const RawView out = ViewOfType(info[4], ArrayTypeOf(kind), "out");
  if (out.length < count) throw Napi::RangeError::New(env, "out is shorter than count");
  if (pos > in.length) throw Napi::RangeError::New(env, "offset is past the end of bytes");
  const uint8_t* data = in.data;
  const size_t size = in.length;
  return Guarded(env, [&]() -> Napi::Value {
    switch (kind) {
      case kU32: {
        auto* dst = reinterpret_cast<uint32_t*>(out.data);
        pos = g_kernels->decodeU32(data, size, pos, count, dst);
        break;
      }
      case kU64: {
        auto* dst = reinterpret_cast<uint64_t*>(out.data);
        for (size_t i = 0; i < count; ++i) dst[i] = leb128::DecodeU64(data, size, pos);
        break;
      }
      case kZigzag32: {
        auto* dst = reinterpret_cast<int32_t*>(out.data);
        pos = g_kernels->decodeZigzag32(data, size, pos, count, dst);
        break;
      }
      case kI64: {
        auto* dst = reinterpret_cast<int64_t*>(out.data);
        for (size_t i = 0; i < count; ++i) dst[i] = leb128::DecodeI64(data, size, pos);
        break;
      }
      case kI32: {
        auto* dst = reinterpret_cast<int32_t*>(out.data);
        for (size_t i = 0; i < count; ++i) dst[i] = leb128::DecodeI32(data, size, pos);
        break;
      }
      case kZigzag64: {
        auto* dst = reinterpret_cast<int64_t*>(out.data);
        for (size_t i = 0; i < count; ++i) dst[i] = leb128::ZigzagDecode64(leb128::DecodeU64(data, size, pos));
        break;
      }
    }
    return Napi::Number::New(env, static_cast<double>(pos));
  });
}

// encodeMany(kind, values, out, offset) -> offset after the last byte written.
// The caller sizes `out` for the worst case (values.length * max bytes).
Napi::Value EncodeMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint32_t kind = KindArg(info);
  const RawView values = ViewOfType(info[1], ArrayTypeOf(kind), "values");
  const RawView out = ViewOfType(info[2], napi_uint8_array, "out");
  size_t pos = IndexArg(info, 3, "offset");
  const size_t maxPer =
      (kind == kU32 || kind == kZigzag32 || kind == kI32) ? leb128::kMaxBytesU32 : leb128::kMaxBytesU64;
  if (pos > out.length || (out.length - pos) / maxPer < values.length) {
    throw Napi::RangeError::New(env, "out is too small for the worst-case encoding");
  }
  uint8_t* dst = out.data;
  const size_t n = values.length;
  switch (kind) {
    case kU32: {
      const auto* src = reinterpret_cast<const uint32_t*>(values.data);
      for (size_t i = 0; i < n; ++i) pos = leb128::EncodeU32(src[i], dst, pos);
      break;
    }
    case kU64: {
      const auto* src = reinterpret_cast<const uint64_t*>(values.data);
      for (size_t i = 0; i < n; ++i) pos = leb128::EncodeU64(src[i], dst, pos);
      break;
    }
    case kZigzag32: {
      const auto* src = reinterpret_cast<const int32_t*>(values.data);
      for (size_t i = 0; i < n; ++i) pos = leb128::EncodeU32(leb128::ZigzagEncode32(src[i]), dst, pos);
      break;
    }
    case kI64: {
      const auto* src = reinterpret_cast<const int64_t*>(values.data);
      for (size_t i = 0; i < n; ++i) pos = leb128::EncodeI64(src[i], dst, pos);
      break;
    }
    case kI32: {
      const auto* src = reinterpret_cast<const int32_t*>(values.data);
      for (size_t i = 0; i < n; ++i) pos = leb128::EncodeI64(src[i], dst, pos);
      break;
    }
    case kZigzag64: {
      const auto* src = reinterpret_cast<const int64_t*>(values.data);
      for (size_t i = 0; i < n; ++i) pos = leb128::EncodeU64(leb128::ZigzagEncode64(src[i]), dst, pos);
      break;
    }
  }
  return Napi::Number::New(env, static_cast<double>(pos));
}

// Test hook: batchKernel() -> "bmi2" or "portable", the u32 batch kernel in use.
Napi::Value BatchKernel(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), g_kernels->name); }

PROFPACK_REGISTER_MODULE("varint",
                         {{"decodeMany", DecodeMany}, {"encodeMany", EncodeMany}, {"batchKernel", BatchKernel}},
                         nullptr, UseLevel);

}  // namespace
}  // namespace profpack
