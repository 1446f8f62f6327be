// Linear-index encoder and validator; see linear_index.h for the layout.
#include "pctable/linear_index.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "common/error_codes.h"

namespace profpack {
namespace pctable {
namespace {

uint8_t LengthCodeOf(int32_t value) {
  if (value >= -128 && value <= 127) return kLength1;
  if (value >= -32768 && value <= 32767) return kLength2;
  return kLength4;
}

void AppendValue(std::vector<uint8_t>& out, int32_t value, uint8_t code) {
  const uint32_t bits = static_cast<uint32_t>(value);
  for (unsigned i = 0; i < kValueBytes[code]; ++i) out.push_back(static_cast<uint8_t>(bits >> (8 * i)));
}

}  // namespace

std::vector<uint8_t> EncodeLinear(const std::vector<VarintRun>& runs, uint32_t sizeBytes, uint32_t quantum) {
  const uint32_t quanta = sizeBytes / quantum;
  const uint32_t chunkCount = ChunkCount(quanta);
  std::vector<uint8_t> body;
  std::vector<uint32_t> chunkOffsets(chunkCount, 0);
  // value -> offset of the first constant chunk (n = 0) emitted with it; the
  // reference reuses it for every later constant chunk, the short last one included.
  std::unordered_map<int32_t, uint32_t> constantChunks;
  std::vector<uint8_t> codes;
  size_t run = 0;
  for (uint32_t chunk = 0; chunk < chunkCount; ++chunk) {
    const uint32_t chunkStart = chunk * kChunkQuanta;
    // 64-bit: the last chunk of a 2^32 - 1 quanta table ends at 2^32.
    const uint32_t chunkEnd = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{chunkStart} + kChunkQuanta, quanta));
    while (runs[run].endPc / quantum <= chunkStart) ++run;
    const int32_t bias = runs[run].value;
    // Every record that starts inside the chunk is a change point (the reference
    // lists record starts; the compiler only starts a record when the value changes).
    size_t last = run + 1;
    while (last < runs.size() && runs[last].startPc / quantum < chunkEnd) ++last;
    const uint32_t n = static_cast<uint32_t>(last - run - 1);
    if (n == 0) {
      const auto found = constantChunks.find(bias);
      const uint32_t offset = found != constantChunks.end() ? found->second : static_cast<uint32_t>(body.size());
      if (found == constantChunks.end()) {
        constantChunks.emplace(bias, offset);
        const uint8_t code = LengthCodeOf(bias);
        body.insert(body.end(), {0, code});
        AppendValue(body, bias, code);
      }
      // Every later chunk inside the same run is the same constant chunk: fill them
      // at once (a 19-byte table can declare a run of ~2^32 PCs, 2^24 chunks).
      const uint32_t runEnd = runs[run].endPc / quantum;
      const uint32_t lastInside = runEnd >= quanta ? chunkCount - 1 : runEnd / kChunkQuanta - 1;
      std::fill(chunkOffsets.begin() + chunk, chunkOffsets.begin() + lastInside + 1, offset);
      chunk = lastInside;
      continue;
    }
    chunkOffsets[chunk] = static_cast<uint32_t>(body.size());
    body.push_back(static_cast<uint8_t>(n));
    for (size_t i = run + 1; i < last; ++i)
      body.push_back(static_cast<uint8_t>(runs[i].startPc / quantum - chunkStart));
    codes.clear();
    codes.push_back(LengthCodeOf(bias));
    for (size_t i = run + 1; i < last; ++i) {
      codes.push_back(
          LengthCodeOf(static_cast<int32_t>(static_cast<uint32_t>(runs[i].value) - static_cast<uint32_t>(bias))));
    }
    const size_t vlenAt = body.size();
    body.resize(vlenAt + (codes.size() + 3) / 4, 0);
    for (size_t i = 0; i < codes.size(); ++i) body[vlenAt + i / 4] |= static_cast<uint8_t>(codes[i] << (2 * (i % 4)));
    AppendValue(body, bias, codes[0]);
    for (size_t i = run + 1; i < last; ++i) {
      AppendValue(body, static_cast<int32_t>(static_cast<uint32_t>(runs[i].value) - static_cast<uint32_t>(bias)),
                  codes[i - run]);
    }
    if (last > run + 1) run = last - 1;
  }

  uint32_t maxOffset = 0;
  for (uint32_t chunk = 1; chunk < chunkCount; ++chunk) maxOffset = std::max(maxOffset, chunkOffsets[chunk]);
  IndexWidth width = IndexWidth::kNone;
  if (chunkCount > 1) {
    // A u8 index starting with 0xfe/0xff would read as a marker: fall back to u16.
    if (maxOffset <= 0xff && chunkOffsets[1] < kIndexMarkerU16) width = IndexWidth::kU8;
    else if (maxOffset <= 0xffff) width = IndexWidth::kU16;
    else width = IndexWidth::kU32;
  }
  const size_t entries = chunkCount > 0 ? chunkCount - 1 : 0;
  const size_t entryBytes = static_cast<size_t>(width);
  const size_t indexBytes = (width == IndexWidth::kU8 || width == IndexWidth::kNone ? 0 : 1) + entries * entryBytes;
  std::vector<uint8_t> out(indexBytes + body.size());
  uint8_t* at = out.data();
  if (width == IndexWidth::kU16) *at++ = kIndexMarkerU16;
  if (width == IndexWidth::kU32) *at++ = kIndexMarkerU32;
  for (uint32_t chunk = 1; chunk < chunkCount; ++chunk) {
    for (size_t i = 0; i < entryBytes; ++i) *at++ = static_cast<uint8_t>(chunkOffsets[chunk] >> (8 * i));
  }
  if (!body.empty()) std::memcpy(at, body.data(), body.size());
  return out;
}

LinearTable LinearTable::Open(const uint8_t* data, size_t length, uint32_t size, uint32_t quantum) {
  LinearTable table;
  table.data = data;
  table.length = length;
  table.size = size;
  table.quantum = quantum;
  const uint32_t quanta = size / quantum;
  table.chunks = ChunkCount(quanta);
  size_t indexBytes = 0;
  if (table.chunks > 1) {
    if (length == 0)
      Fail(codes::kPctableTruncated, "linear table is empty but needs a chunk index", 0, "a chunk index");
    const size_t entries = table.chunks - 1;
    if (data[0] == kIndexMarkerU16) {
      table.width = IndexWidth::kU16;
      indexBytes = 1 + 2 * entries;
    } else if (data[0] == kIndexMarkerU32) {
      table.width = IndexWidth::kU32;
      indexBytes = 1 + 4 * entries;
    } else {
      table.width = IndexWidth::kU8;
      indexBytes = entries;
    }
    if (indexBytes > length) {
      Fail(codes::kPctableTruncated, "linear table ends inside its chunk index", length,
           "a chunk index of " + std::to_string(indexBytes) + " bytes for " + std::to_string(table.chunks) + " chunks");
    }
  }
  table.indexBytes = static_cast<uint32_t>(indexBytes);
  const size_t dataBytes = length - indexBytes;
  size_t lastChecked = SIZE_MAX;
  for (uint32_t chunk = 0; chunk < table.chunks; ++chunk) {
    const size_t offset = table.ChunkOffset(chunk);
    if (offset == lastChecked) continue;  // deduplicated constant chunks repeat an offset
    if (offset >= dataBytes) {
      if (chunk == 0)
        Fail(codes::kPctableTruncated, "linear table ends before its first chunk", length, "chunk 0 after the index");
      const size_t entryAt =
          table.width == IndexWidth::kU8 ? chunk - 1 : 1 + static_cast<size_t>(table.width) * (chunk - 1);
      Fail(codes::kPctableBadOffset,
           "chunk " + std::to_string(chunk) + " offset " + std::to_string(offset) + " points outside the linear table",
           entryAt, "an offset below " + std::to_string(dataBytes));
    }
    const size_t at = indexBytes + offset;
    const uint32_t n = data[at];
    const size_t pcsAt = at + 1;
    const size_t vlenAt = pcsAt + n;
    const size_t vlenBytes = (n + 4) / 4;
    if (vlenAt + vlenBytes > length)
      Fail(codes::kPctableTruncated, "linear chunk runs past the end of the table", at,
           "n, pcs and vlen inside the table");
    uint32_t previous = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t pc = data[pcsAt + i];
      if (pc <= previous)
        Fail(codes::kPctableBadPcs, "linear chunk pcs are not ascending positions 1..255", pcsAt + i,
             "a position above " + std::to_string(previous));
      previous = pc;
    }
    size_t valueBytes = 0;
    for (uint32_t i = 0; i <= n; ++i) {
      const uint32_t code = (data[vlenAt + i / 4] >> (2 * (i % 4))) & 3;
      if (code == kLengthUnused)
        Fail(codes::kPctableBadLengthCode, "linear chunk value " + std::to_string(i) + " has length code 0b00",
             vlenAt + i / 4, "a length code 0b01, 0b10 or 0b11");
      valueBytes += kValueBytes[code];
    }
    if (vlenAt + vlenBytes + valueBytes > length)
      Fail(codes::kPctableTruncated, "linear chunk values run past the end of the table", vlenAt + vlenBytes,
           std::to_string(valueBytes) + " bytes of values");
    lastChecked = offset;
  }
  return table;
}

}  // namespace pctable
}  // namespace profpack
