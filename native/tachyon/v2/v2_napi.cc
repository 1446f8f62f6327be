// N-API glue for the version-2 region decoder: one crossing per region. The
// result carries the samples decoded before any error, and the error's
// fields, so the JS layer delivers those samples and then throws (the JS
// twin's behaviour).
#include <napi.h>
#include <cstring>

#include "common/errors.h"
#include "common/module_registry.h"
#include "common/typed_array.h"
#include "tachyon/v2/region_decoder.h"

namespace profpack {
namespace {

uint64_t BigIntArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsBigInt()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a bigint");
  bool lossless = false;
  const uint64_t v = info[i].As<Napi::BigInt>().Uint64Value(&lossless);
  if (!lossless) throw Napi::RangeError::New(info.Env(), std::string(what) + " must be a u64");
  return v;
}

template <typename T, typename Array>
Array Copy(Napi::Env env, const std::vector<T>& values) {
  Array out = Array::New(env, values.size());
  if (!values.empty()) std::memcpy(out.Data(), values.data(), values.size() * sizeof(T));
  return out;
}

// decodeRegion(region: Uint8Array, base: number, startTimeUs: bigint, sampleIntervalUs: bigint)
Napi::Value DecodeRegion(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView region = ViewOfType(info[0], napi_uint8_array, "region");
  const size_t base = IndexArg(info, 1, "base");
  const uint64_t start = BigIntArg(info, 2, "startTimeUs");
  const uint64_t interval = BigIntArg(info, 3, "sampleIntervalUs");
  // Thread definitions are read with memcpy: little-endian hosts only (version 2 files are little-endian).
  const uint16_t probe = 1;
  if (*reinterpret_cast<const uint8_t*>(&probe) != 1) throw Napi::Error::New(env, "version-2 native decoding needs a little-endian host");
  v2::DecodedRegion decoded;
  v2::DecodeRegion(region.data, region.length, static_cast<int64_t>(base), start, interval, decoded);
  Napi::Object result = Napi::Object::New(env);
  result.Set("threadIds", Copy<uint64_t, Napi::BigUint64Array>(env, decoded.threadIds));
  result.Set("interpreterIds", Copy<uint32_t, Napi::Uint32Array>(env, decoded.interpreterIds));
  result.Set("sampleThread", Copy<uint32_t, Napi::Uint32Array>(env, decoded.sampleThread));
  result.Set("timestamps", Copy<uint64_t, Napi::BigUint64Array>(env, decoded.timestamps));
  result.Set("statuses", Copy<uint8_t, Napi::Uint8Array>(env, decoded.statuses));
  result.Set("stackOffsets", Copy<uint32_t, Napi::Uint32Array>(env, decoded.stackOffsets));
  result.Set("frames", Copy<uint32_t, Napi::Uint32Array>(env, decoded.frames));
  if (decoded.error) {
    result.Set("error", MakeProfpackError(env, *decoded.error).Value());
  }
  return result;
}

void InitV2(Napi::Env env, Napi::Object exports) {
  exports.Set("decodeRegion", Napi::Function::New(env, DecodeRegion, "decodeRegion"));
}

PROFPACK_REGISTER_MODULE("v2", InitV2);

}  // namespace
}  // namespace profpack
