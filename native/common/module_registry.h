// Each concern (varint, svb, tachyon, pctable, ...) registers its N-API
// functions from its own translation unit with PROFPACK_REGISTER_MODULE, so
// adding a concern never touches binding.cc. binding.cc is the one place that
// builds the exports, checks PROFPACK_SIMD and hands each module its SIMD level.
#pragma once
#include <napi.h>

#include <initializer_list>
#include <vector>

#include "common/simd_level.h"

namespace profpack {

struct ModuleFunction {
  const char* name;
  Napi::Function::Callback callback;
};

// Adds what a function list cannot (a class, a constant) to the module's object.
using ModuleInit = void (*)(Napi::Env env, Napi::Object exports);
// Picks the module's kernels for `level`: at load, and when the setKernelLevel test hook switches the process.
using ModuleUseLevel = void (*)(SimdLevel level);

struct ModuleEntry {
  const char* name;
  std::vector<ModuleFunction> functions;
  ModuleInit init;
  ModuleUseLevel useLevel;
};

// Function-local static: safe whatever order the translation units initialise in.
inline std::vector<ModuleEntry>& RegisteredModules() {
  static std::vector<ModuleEntry> modules;
  return modules;
}

struct ModuleRegistrar {
  ModuleRegistrar(const char* name, std::initializer_list<ModuleFunction> functions, ModuleInit init = nullptr,
                  ModuleUseLevel useLevel = nullptr) {
    RegisteredModules().push_back({name, functions, init, useLevel});
  }
};

// Switches every module's kernels to `level` (the caller checked that this CPU runs it).
void UseSimdLevel(SimdLevel level);

}  // namespace profpack

// Use once per translation unit, inside the concern's namespace: adds the listed functions (and what the optional
// init adds) to exports[name] at load time, e.g.
//   PROFPACK_REGISTER_MODULE("varint", {{"decodeMany", DecodeMany}, {"encodeMany", EncodeMany}}, nullptr, UseLevel);
#define PROFPACK_REGISTER_MODULE(name, ...) static const ::profpack::ModuleRegistrar profpack_module(name, __VA_ARGS__)
