// Shared helpers for the libFuzzer harnesses in native/fuzz/. These files are
// built by test/fuzz/build.sh with clang -fsanitize=fuzzer,address,undefined
// and link only the pure C++ decoding cores (scripts/native-sources.js keeps
// this folder out of the addon).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "common/format_error.h"

namespace profpack {
namespace fuzz {

// A harness found a contract violation that is not a memory error: print it
// and abort, so libFuzzer saves the input as a crash.
[[noreturn]] inline void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "profpack fuzz contract violated: %s %s\n", what, detail.c_str());
  std::abort();
}

#define PROFPACK_FUZZ_CHECK(cond, detail)                 \
  do {                                                    \
    if (!(cond)) ::profpack::fuzz::Fail(#cond, (detail)); \
  } while (0)

// Takes parameters from the front of the input, the rest is the payload.
// Reading past the end yields zeros, so every input is a valid parameter set.
class Params {
 public:
  Params(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(Byte()) << (8 * i);
    return v;
  }
  const uint8_t* rest() const { return data_ + pos_; }
  size_t rest_size() const { return size_ - pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A FormatError must carry one of the codes its decoder documents and an
// offset inside the input (or -1 when none applies).
inline void CheckFormatError(const FormatError& e, size_t input_size, std::initializer_list<const char*> codes) {
  bool known = false;
  for (const char* c : codes) known = known || e.code == c;
  PROFPACK_FUZZ_CHECK(known, "unexpected error code " + e.code + ": " + e.what());
  PROFPACK_FUZZ_CHECK(e.offset >= -1 && (e.offset == -1 || static_cast<uint64_t>(e.offset) <= input_size),
                      "error offset " + std::to_string(e.offset) + " outside input of " + std::to_string(input_size));
}

}  // namespace fuzz
}  // namespace profpack
