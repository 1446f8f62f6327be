// The error type of the pure C++ cores (no N-API), so decoders can run under
// libFuzzer and in plain C++ tests. N-API glue turns it into a ProfpackError
// (common/errors.h).
#pragma once
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
      : std::runtime_error(std::move(message)),
        code(std::move(code_)),
        offset(offset_),
        expected(std::move(expected_)) {}
};

}  // namespace profpack
