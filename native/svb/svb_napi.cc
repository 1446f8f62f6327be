// N-API glue for Stream VByte: one crossing per batch. `mode` picks the
// stream kind (kMode* below, mirrored in lib/svb/native.ts); the kernels are
// the ones of the SIMD level chosen at load (common/simd_level.h), which the
// setKernelLevel test hook switches for every module (UseSimdLevel), so the
// suite exercises every level this CPU has.
#include <napi.h>

#include <string>

#include "common/cpu_features.h"
#include "common/errors.h"
#include "common/module_registry.h"
#include "common/simd_level.h"
#include "common/typed_array.h"
#include "svb/svb_format.h"
#include "svb/svb_kernels.h"

namespace profpack {
namespace svb {
namespace {

// 0..3: the 1234 layout with Transform 0..3; 4: the 0124 layout.
constexpr uint32_t kMode0124 = 4;

const Kernels* g_kernels = nullptr;

const Kernels& Active() { return *g_kernels; }

void UseLevel(SimdLevel level) {
  g_kernels = KernelsFor(level);
  if (g_kernels == nullptr) g_kernels = &ScalarKernels();
}

uint32_t ModeArg(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() <= i || !info[i].IsNumber()) throw Napi::TypeError::New(info.Env(), "mode must be a number");
  const uint32_t mode = info[i].As<Napi::Number>().Uint32Value();
  if (mode > kMode0124) throw Napi::RangeError::New(info.Env(), "unknown Stream VByte mode");
  return mode;
}

uint32_t PrevArg(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() <= i || !info[i].IsNumber()) throw Napi::TypeError::New(info.Env(), "prev must be a number");
  return info[i].As<Napi::Number>().Uint32Value();  // ToUint32: wraps like the JS twin
}

RawView WordsArg(const Napi::Value& value, const char* what) {
  RawView view = ViewOf(value, what);
  if (view.type != napi_uint32_array && view.type != napi_int32_array) {
    throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a Uint32Array or Int32Array");
  }
  return view;
}

// encode(values, out, mode, prev) -> encoded length; out holds MaxEncodedLength(n) bytes.
Napi::Value Encode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView values = WordsArg(info[0], "values");
  const RawView out = ViewOfType(info[1], napi_uint8_array, "out");
  const uint32_t mode = ModeArg(info, 2);
  const uint32_t prev = PrevArg(info, 3);
  if (out.length < MaxEncodedLength(values.length))
    throw Napi::RangeError::New(env, "out is shorter than maxEncodedLength(n)");
  const auto* in = reinterpret_cast<const uint32_t*>(values.data);
  const EncodeFn fn = mode == kMode0124 ? Active().encode0124 : Active().encode1234[mode];
  return Napi::Number::New(env, static_cast<double>(fn(in, values.length, out.data, prev)));
}

// decode(bytes, count, out, mode, prev) -> bytes the stream took.
Napi::Value Decode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView bytes = ViewOfType(info[0], napi_uint8_array, "bytes");
  const size_t count = IndexArg(info, 1, "count");
  const RawView out = WordsArg(info[2], "out");
  const uint32_t mode = ModeArg(info, 3);
  const uint32_t prev = PrevArg(info, 4);
  if (out.length < count) throw Napi::RangeError::New(env, "out is shorter than count");
  auto* dst = reinterpret_cast<uint32_t*>(out.data);
  const DecodeFn fn = mode == kMode0124 ? Active().decode0124 : Active().decode1234[mode];
  return Guarded(env, [&]() -> Napi::Value {
    return Napi::Number::New(env, static_cast<double>(fn(bytes.data, bytes.length, count, dst, prev)));
  });
}

// encodedLength(values, mode, prev) -> exact encoded length.
Napi::Value EncodedLengthOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView values = WordsArg(info[0], "values");
  const uint32_t mode = ModeArg(info, 1);
  const uint32_t prev = PrevArg(info, 2);
  const auto* in = reinterpret_cast<const uint32_t*>(values.data);
  const size_t n = values.length;
  size_t length = 0;
  switch (mode) {
    case 0: length = EncodedLength<Variant::k1234, Transform::kPlain>(in, n, prev); break;
    case 1: length = EncodedLength<Variant::k1234, Transform::kDelta>(in, n, prev); break;
    case 2: length = EncodedLength<Variant::k1234, Transform::kZigzag>(in, n, prev); break;
    case 3: length = EncodedLength<Variant::k1234, Transform::kZigzagDelta>(in, n, prev); break;
    default: length = EncodedLength<Variant::k0124, Transform::kPlain>(in, n, prev); break;
  }
  return Napi::Number::New(env, static_cast<double>(length));
}

// validate(bytes, count, mode) -> whether the stream is exactly as long as its control bytes say.
Napi::Value ValidateStream(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView bytes = ViewOfType(info[0], napi_uint8_array, "bytes");
  const size_t count = IndexArg(info, 1, "count");
  const uint32_t mode = ModeArg(info, 2);
  const bool ok = mode == kMode0124 ? Validate<Variant::k0124>(bytes.data, bytes.length, count)
                                    : Validate<Variant::k1234>(bytes.data, bytes.length, count);
  return Napi::Boolean::New(env, ok);
}

// Test hooks. kernelLevel() -> the level in use; setKernelLevel(name) switches
// the kernels of this process, every module's (refusing levels the CPU lacks,
// like PROFPACK_SIMD), and returns the previous level; kernelLevels() lists the
// levels this CPU can run.
Napi::Value KernelLevel(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), SimdLevelName(Active().level));
}

Napi::Value KernelLevels(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array levels = Napi::Array::New(env);
  for (SimdLevel level : kAllSimdLevels) {
    if (SimdLevelSupported(level, DetectedCpuFeatures()) && KernelsFor(level) != nullptr) {
      levels.Set(levels.Length(), SimdLevelName(level));
    }
  }
  return levels;
}

Napi::Value SetKernelLevel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "level must be a string");
  SimdLevel level;
  std::string error;
  if (!ResolveSimdLevel(info[0].As<Napi::String>().Utf8Value(), DetectedCpuFeatures(), level, error)) {
    throw Napi::Error::New(env, error);
  }
  if (KernelsFor(level) == nullptr)
    throw Napi::Error::New(env, std::string("the ") + SimdLevelName(level) + " kernels are not built in");
  const char* previous = SimdLevelName(Active().level);
  UseSimdLevel(level);
  return Napi::String::New(env, previous);
}

// resolveSimdLevel(requested, {sse41, avx2, neon}) -> {level} or {error}: the
// PROFPACK_SIMD rules for a CPU other than this one.
Napi::Value ResolveLevel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsObject()) {
    throw Napi::TypeError::New(env, "resolveSimdLevel(requested, cpu)");
  }
  const Napi::Object cpuArg = info[1].As<Napi::Object>();
  CpuFeatures cpu;
  cpu.sse41 = cpuArg.Get("sse41").ToBoolean().Value();
  cpu.avx2 = cpuArg.Get("avx2").ToBoolean().Value();
  cpu.neon = cpuArg.Get("neon").ToBoolean().Value();
  SimdLevel level;
  std::string error;
  Napi::Object result = Napi::Object::New(env);
  if (ResolveSimdLevel(info[0].As<Napi::String>().Utf8Value(), cpu, level, error)) {
    result.Set("level", SimdLevelName(level));
  } else {
    result.Set("error", error);
  }
  return result;
}

PROFPACK_REGISTER_MODULE("svb",
                         {{"encode", Encode},
                          {"decode", Decode},
                          {"encodedLength", EncodedLengthOf},
                          {"validate", ValidateStream},
                          {"kernelLevel", KernelLevel},
                          {"kernelLevels", KernelLevels},
                          {"setKernelLevel", SetKernelLevel},
                          {"resolveSimdLevel", ResolveLevel}},
                         nullptr, UseLevel);

}  // namespace
}  // namespace svb
}  // namespace profpack
