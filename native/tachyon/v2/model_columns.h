// Native twin of lib/tachyon/codec/model/section.ts's value-column decoder (docs/format-v2.md
// §8): the per-sample part of a model section, coding 0 (zigzag LEB128 of the
// delta to the column's previous value). Pure C++ (no N-API), so the fuzz
// harness drives it. Same values, error codes, messages and offsets as the JS twin.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/format_error.h"

namespace profpack {
namespace v2 {

// Decodes n values from data[0, size) into out; error offsets are base + the
// offset in data. Returns the bytes used; throws FormatError on bad input.
size_t DecodeDeltaColumn(const uint8_t* data, size_t size, int64_t base, size_t n, double* out);

}  // namespace v2
}  // namespace profpack
