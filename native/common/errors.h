// Native failures surface as the JS ProfpackError class, with the same codes
// as the JS twin: lib/backend.ts hands the constructor over at load time.
#pragma once
#include <napi.h>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace profpack {

// A decoding failure in pure C++ code (no N-API), so decoders can also run
// under libFuzzer. The N-API glue turns it into a ProfpackError.
struct FormatError : std::runtime_error {
  std::string code;
  int64_t offset;  // -1 when no byte offset applies
  std::string expected;
  FormatError(std::string code_, std::string message, int64_t offset_ = -1, std::string expected_ = "")
      : std::runtime_error(std::move(message)), code(std::move(code_)), offset(offset_), expected(std::move(expected_)) {}
};

// Builds a ProfpackError (or a plain Error carrying the same fields before the
// class was registered) without throwing it.
Napi::Error MakeProfpackError(Napi::Env env, const std::string& code, const std::string& message,
                              int64_t offset = -1, const std::string& expected = "");

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
