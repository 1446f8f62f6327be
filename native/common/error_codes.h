// Every ProfpackError code the C++ sources raise or check, each named once
// (codes::kV2Limit is "ERR_V2_LIMIT"): no other native source spells a code as
// a string literal. test/errors.test.ts reads this header and fails on a code
// that lib/errors.ts's ErrorCode list lacks, so a typo cannot ship.
#pragma once

namespace profpack {
namespace codes {

inline constexpr const char* kInvalidArgument = "ERR_INVALID_ARGUMENT";
inline constexpr const char* kPctableBadLengthCode = "ERR_PCTABLE_BAD_LENGTH_CODE";
inline constexpr const char* kPctableBadOffset = "ERR_PCTABLE_BAD_OFFSET";
inline constexpr const char* kPctableBadPcs = "ERR_PCTABLE_BAD_PCS";
inline constexpr const char* kPctableEmptyRun = "ERR_PCTABLE_EMPTY_RUN";
inline constexpr const char* kPctablePcOverflow = "ERR_PCTABLE_PC_OVERFLOW";
inline constexpr const char* kPctableSizeMismatch = "ERR_PCTABLE_SIZE_MISMATCH";
inline constexpr const char* kPctableTruncated = "ERR_PCTABLE_TRUNCATED";
inline constexpr const char* kPctableVarintOverflow = "ERR_PCTABLE_VARINT_OVERFLOW";
inline constexpr const char* kSvbTruncated = "ERR_SVB_TRUNCATED";
inline constexpr const char* kTachyonFileChanged = "ERR_TACHYON_FILE_CHANGED";
inline constexpr const char* kTachyonFinalStackDepth = "ERR_TACHYON_FINAL_STACK_DEPTH";
inline constexpr const char* kTachyonIo = "ERR_TACHYON_IO";
inline constexpr const char* kTachyonReaderClosed = "ERR_TACHYON_READER_CLOSED";
inline constexpr const char* kTachyonRleCount = "ERR_TACHYON_RLE_COUNT";
inline constexpr const char* kTachyonRleCountVarint = "ERR_TACHYON_RLE_COUNT_VARINT";
inline constexpr const char* kTachyonRleTruncated = "ERR_TACHYON_RLE_TRUNCATED";
inline constexpr const char* kTachyonRleVarint = "ERR_TACHYON_RLE_VARINT";
inline constexpr const char* kTachyonSampleTruncated = "ERR_TACHYON_SAMPLE_TRUNCATED";
inline constexpr const char* kTachyonSampleVarint = "ERR_TACHYON_SAMPLE_VARINT";
inline constexpr const char* kTachyonSharedCount = "ERR_TACHYON_SHARED_COUNT";
inline constexpr const char* kTachyonStackDepth = "ERR_TACHYON_STACK_DEPTH";
inline constexpr const char* kTachyonStackVarint = "ERR_TACHYON_STACK_VARINT";
inline constexpr const char* kTachyonThreadCount = "ERR_TACHYON_THREAD_COUNT";
inline constexpr const char* kTachyonTruncatedRecord = "ERR_TACHYON_TRUNCATED_RECORD";
inline constexpr const char* kTachyonUnknownEncoding = "ERR_TACHYON_UNKNOWN_ENCODING";
inline constexpr const char* kTachyonWriteIo = "ERR_TACHYON_WRITE_IO";
inline constexpr const char* kTachyonWriteUnknownId = "ERR_TACHYON_WRITE_UNKNOWN_ID";
inline constexpr const char* kV2BadBlock = "ERR_V2_BAD_BLOCK";
inline constexpr const char* kV2BadCodeword = "ERR_V2_BAD_CODEWORD";
inline constexpr const char* kV2BadHeap = "ERR_V2_BAD_HEAP";
inline constexpr const char* kV2BadKeep = "ERR_V2_BAD_KEEP";
inline constexpr const char* kV2BadModel = "ERR_V2_BAD_MODEL";
inline constexpr const char* kV2Limit = "ERR_V2_LIMIT";
inline constexpr const char* kV2StackCycle = "ERR_V2_STACK_CYCLE";
inline constexpr const char* kV2StackTooDeep = "ERR_V2_STACK_TOO_DEEP";
inline constexpr const char* kV2Truncated = "ERR_V2_TRUNCATED";
inline constexpr const char* kV2UndefinedBucket = "ERR_V2_UNDEFINED_BUCKET";
inline constexpr const char* kV2UndefinedStack = "ERR_V2_UNDEFINED_STACK";
inline constexpr const char* kV2UndefinedThread = "ERR_V2_UNDEFINED_THREAD";
inline constexpr const char* kVarintOverflow = "ERR_VARINT_OVERFLOW";
inline constexpr const char* kVarintTruncated = "ERR_VARINT_TRUNCATED";

}  // namespace codes
}  // namespace profpack
