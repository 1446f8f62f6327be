// Each concern (varint, svb, tachyon, pctable, ...) registers its N-API
// functions from its own translation unit with PROFPACK_REGISTER_MODULE, so
// adding a concern never touches binding.cc.
#pragma once
#include <napi.h>
#include <vector>

namespace profpack {

using ModuleInit = void (*)(Napi::Env env, Napi::Object exports);

struct ModuleEntry {
  const char* name;
  ModuleInit init;
};

// Function-local static: safe whatever order the translation units initialise in.
inline std::vector<ModuleEntry>& RegisteredModules() {
  static std::vector<ModuleEntry> modules;
  return modules;
}

struct ModuleRegistrar {
  ModuleRegistrar(const char* name, ModuleInit init) { RegisteredModules().push_back({name, init}); }
};

}  // namespace profpack

// Use inside the concern's namespace, after `init`. Registers `init` so that it adds its functions to exports[name] at
// load time.
#define PROFPACK_REGISTER_MODULE(name, init) static ::profpack::ModuleRegistrar profpack_registrar_##init(name, init)
