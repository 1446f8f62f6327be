// Constants of the Tachyon format as CPython 3.15.2 writes and reads it; the
// twin of lib/tachyon/format.ts (see ../shared/notes/tachyon-format.md).
#pragma once
#include <cstddef>
#include <cstdint>

namespace profpack {
namespace tachyon {

inline constexpr uint32_t kMagic = 0x54414348;         // LE files start "HCAT"
inline constexpr uint32_t kMagicSwapped = 0x48434154;  // read with the wrong byte order
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kFormatVersion2 = 2;

inline constexpr size_t kHeaderSize = 64;
namespace header {
inline constexpr size_t kMagic = 0, kVersion = 4, kPythonMajor = 8, kPythonMinor = 9, kPythonMicro = 10, kReserved = 11,
                        kStartTimeUs = 12, kSampleIntervalUs = 20, kSampleCount = 28, kThreadCount = 36,
                        kStringTableOffset = 40, kFrameTableOffset = 48, kCompressionType = 56, kProfilingConfig = 60;
}  // namespace header

enum class Compression : uint32_t { kNone = 0, kZstd = 1 };
inline constexpr int kZstdLevel = 5;
inline constexpr uint64_t kZstdMaxDecompressed = uint64_t{1} << 30;

inline constexpr uint32_t kConfigModeMask = 0x7, kConfigFeaturesKnown = 1u << 3, kConfigFeaturesShift = 4,
                          kConfigFeaturesMask = 0x1f;

inline constexpr size_t kRecordPrefixSize = 13;  // thread_id u64, interpreter_id u32, encoding u8
enum class RecordKind : uint8_t { kRepeat = 0, kFull = 1, kSuffix = 2, kPopPush = 3 };

inline constexpr size_t kMaxStackDepth = 256;
inline constexpr size_t kRepeatBufferSize = 16 * 1024;
inline constexpr size_t kRepeatEntryMax = 11;
inline constexpr size_t kWriteBufferSize = 512 * 1024;
// Raw records per zstd call (lib/tachyon/format.ts ZSTD_INPUT_SIZE): zstd's tables go cold between calls.
inline constexpr size_t kZstdInputSize = 4 * 1024 * 1024;

inline constexpr uint8_t kNoOpcode = 255;
inline constexpr size_t kMinFrameEntrySize = 7;

inline constexpr size_t kStatsBlockSize = 56, kStatsBlockLegacySize = 32, kStatsTailSize = 16;
inline constexpr size_t kFooterSize = 32;

}  // namespace tachyon
}  // namespace profpack
