// The addon's entry point: capability report, error class hand-over, and the
// functions every concern registered (see common/module_registry.h).
#include <napi.h>

#include "common/cpu_features.h"
#include "common/errors.h"
#include "common/module_registry.h"
#include "common/simd_level.h"
#include "platform/file.h"

namespace profpack {

namespace {

Napi::FunctionReference* ErrorClass(Napi::Env env) { return env.GetInstanceData<Napi::FunctionReference>(); }

Napi::Value SetErrorClass(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) {
    throw Napi::TypeError::New(env, "setErrorClass expects the ProfpackError constructor");
  }
  auto* ref = new Napi::FunctionReference(Napi::Persistent(info[0].As<Napi::Function>()));
  env.SetInstanceData<Napi::FunctionReference>(ref);  // freed by N-API at env teardown
  return env.Undefined();
}

Napi::Object Features(Napi::Env env) {
  const CpuFeatures& cpu = DetectedCpuFeatures();
  Napi::Object f = Napi::Object::New(env);
  f.Set("sse41", cpu.sse41);
  f.Set("avx2", cpu.avx2);
  f.Set("bmi2", cpu.bmi2);
  f.Set("popcnt", cpu.popcnt);
  f.Set("fastPext", cpu.fastPext);
  f.Set("neon", cpu.neon);
  f.Set("simd", SimdLevelName(ActiveSimdLevel()));
  // Whether the batch varint decoders use pext at that level (SimdLevelUsesPext).
  f.Set("pext", SimdLevelUsesPext(ActiveSimdLevel(), cpu));
  f.Set("mmap", platform::CanMap());
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  f.Set("littleEndian", false);
#else
  f.Set("littleEndian", true);
#endif
  return f;
}

}  // namespace

void UseSimdLevel(SimdLevel level) {
  SetActiveSimdLevel(level);
  for (const ModuleEntry& module : RegisteredModules()) {
    if (module.useLevel != nullptr) module.useLevel(level);
  }
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // An unusable PROFPACK_SIMD fails the load: running other kernels than the
  // ones asked for would make a forced-level test pass without testing them.
  if (!SimdLevelError().empty()) throw Napi::Error::New(env, SimdLevelError());
  UseSimdLevel(ActiveSimdLevel());
  exports.Set("setErrorClass", Napi::Function::New(env, SetErrorClass, "setErrorClass"));
  exports.Set("features", Features(env));
  for (const ModuleEntry& module : RegisteredModules()) {
    Napi::Object target = Napi::Object::New(env);
    for (const ModuleFunction& f : module.functions) target.Set(f.name, Napi::Function::New(env, f.callback, f.name));
    if (module.init != nullptr) module.init(env, target);
    exports.Set(module.name, target);
  }
  return exports;
}

Napi::Error MakeProfpackError(Napi::Env env, const std::string& code, const std::string& message, int64_t offset,
                              const std::string& expected) {
  Napi::Object options = Napi::Object::New(env);
  options.Set("code", code);
  if (offset >= 0) options.Set("offset", Napi::Number::New(env, static_cast<double>(offset)));
  if (!expected.empty()) options.Set("expected", expected);
  Napi::FunctionReference* cls = ErrorClass(env);
  if (cls != nullptr && !cls->IsEmpty()) {
    Napi::Object err = cls->New({Napi::String::New(env, message), options});
    return Napi::Error(env, err);
  }
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", code);
  if (offset >= 0) err.Set("offset", Napi::Number::New(env, static_cast<double>(offset)));
  if (!expected.empty()) err.Set("expected", expected);
  return err;
}

}  // namespace profpack

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return profpack::Init(env, exports); }

NODE_API_MODULE(profpack, InitAddon)
