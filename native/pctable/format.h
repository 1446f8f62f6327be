// Constants and error codes of Go's pcvalue tables (varint-delta, Go 1.21) and
// of the "linear index" encoding (seed 000; ../shared/notes/go-pcvalue.md).
// The twin of lib/pctable/format.ts.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error_codes.h"
#include "common/format_error.h"

namespace profpack {
namespace pctable {

// Varint-delta: the decoder starts from value -1 (runtime.pcvalue's `val := int32(-1)`).
inline constexpr int32_t kStartValue = -1;
// A Go varint that must fit 32 bits: at most 5 bytes, the 5th carrying bits 28..31.
inline constexpr unsigned kMaxVarintBytes = 5;
// cmd/link stores pcHeader.minLC as a u8.
inline constexpr uint32_t kMaxQuantum = 255;

// Linear index: a chunk covers 256 PC quanta (256 bytes on amd64, 1024 on arm64).
inline constexpr uint32_t kChunkShift = 8;
inline constexpr uint32_t kChunkQuanta = 1u << kChunkShift;
// First byte of a chunk index in the u16 / u32 forms; the u8 form never starts with them.
inline constexpr uint8_t kIndexMarkerU16 = 0xfe;
inline constexpr uint8_t kIndexMarkerU32 = 0xff;
// 2-bit value length codes in vlen (low bits first): 0b00 is never a used field.
inline constexpr uint8_t kLengthUnused = 0, kLength1 = 1, kLength2 = 2, kLength4 = 3;

// Error codes shared with lib/errors.ts (// pctable block).

[[noreturn]] inline void Fail(const char* code, const std::string& message, size_t offset,
                              const std::string& expected) {
  throw FormatError(code, message, static_cast<int64_t>(offset), expected);
}

}  // namespace pctable
}  // namespace profpack
