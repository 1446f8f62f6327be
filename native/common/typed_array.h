// Raw views of JS typed arrays for batch calls: one N-API crossing per batch.
#pragma once
#include <napi.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace profpack {

struct RawView {
  uint8_t* data = nullptr;
  size_t length = 0;  // elements
  size_t byteLength = 0;
  napi_typedarray_type type = napi_uint8_array;
};

inline RawView ViewOf(const Napi::Value& value, const char* what) {
  Napi::Env env = value.Env();
  if (!value.IsTypedArray()) throw Napi::TypeError::New(env, std::string(what) + " must be a typed array");
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  napi_value arraybuffer;
  size_t byteOffset = 0;
  NAPI_THROW_IF_FAILED(env, napi_get_typedarray_info(env, value, &type, &length, &data, &arraybuffer, &byteOffset),
                       RawView());
  RawView view;
  view.data = static_cast<uint8_t*>(data);
  view.length = length;
  view.type = type;
  size_t elementSize = 1;
  switch (type) {
    case napi_int16_array:
    case napi_uint16_array: elementSize = 2; break;
    case napi_int32_array:
    case napi_uint32_array:
    case napi_float32_array: elementSize = 4; break;
    case napi_float64_array:
    case napi_bigint64_array:
    case napi_biguint64_array: elementSize = 8; break;
    default: elementSize = 1;
  }
  view.byteLength = length * elementSize;
  return view;
}

inline RawView ViewOfType(const Napi::Value& value, napi_typedarray_type expected, const char* what) {
  RawView view = ViewOf(value, what);
  const bool bytesOk = expected == napi_uint8_array && (view.type == napi_uint8_array || view.type == napi_int8_array ||
                                                        view.type == napi_uint8_clamped_array);
  if (view.type != expected && !bytesOk) {
    throw Napi::TypeError::New(value.Env(), std::string(what) + " has the wrong typed-array type");
  }
  return view;
}

// A non-negative integer argument that must be a safe index.
inline size_t IndexArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  Napi::Env env = info.Env();
  if (info.Length() <= i || !info[i].IsNumber())
    throw Napi::TypeError::New(env, std::string(what) + " must be a number");
  const double d = info[i].As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > 9007199254740991.0 || d != static_cast<double>(static_cast<uint64_t>(d))) {
    throw Napi::RangeError::New(env, std::string(what) + " must be a non-negative integer");
  }
  return static_cast<size_t>(d);
}

// A new JS typed array holding a copy of values[0, n): how results and stats leave the addon.
template <typename T>
Napi::TypedArrayOf<T> CopyOut(Napi::Env env, const T* values, size_t n) {
  Napi::TypedArrayOf<T> out = Napi::TypedArrayOf<T>::New(env, n);
  if (n != 0) std::memcpy(out.Data(), values, n * sizeof(T));
  return out;
}

template <typename T>
Napi::TypedArrayOf<T> CopyOut(Napi::Env env, const std::vector<T>& values) {
  return CopyOut(env, values.data(), values.size());
}

// Counters (stats calls): a Float64Array, exact for counts up to 2^53.
inline Napi::Float64Array CountersOut(Napi::Env env, std::initializer_list<double> counters) {
  return CopyOut(env, counters.begin(), counters.size());
}

}  // namespace profpack
