// Native failures surface as the JS ProfpackError class, with the same codes
// as the JS twin: lib/backend.ts hands the constructor over at load time.
#pragma once
#include <napi.h>
#include <cstdint>
#include <string>

#include "common/format_error.h"

namespace profpack {

// Builds a ProfpackError (or a plain Error carrying the same fields before the
// class was registered) without throwing it.
Napi::Error MakeProfpackError(Napi::Env env, const std::string& code, const std::string& message, int64_t offset = -1,
                              const std::string& expected = "");

inline Napi::Error MakeProfpackError(Napi::Env env, const FormatError& e) {
  return MakeProfpackError(env, e.code, e.what(), e.offset, e.expected);
}

// Runs `body`, translating FormatError into a thrown ProfpackError.
template <typename F>
auto Guarded(Napi::Env env, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const FormatError& e) {
    throw MakeProfpackError(env, e);
  }
}

}  // namespace profpack
