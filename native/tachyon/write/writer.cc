// See writer.h. Record layouts: ../shared/notes/tachyon-format.md §3 and §5.
#include "tachyon/write/writer.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "common/error_codes.h"
#include "varint/leb128.h"

namespace profpack {
namespace tachyon {
namespace {

// Largest non-REPEAT record: prefix, 10-byte delta, status, two 5-byte counts, 256 indices.
constexpr size_t kMaxStackRecord = kRecordPrefixSize + 10 + 1 + 5 + 5 + 5 * kMaxStackDepth;
constexpr size_t kMaxRepeatRecord = kRecordPrefixSize + 5 + kRepeatBufferSize;

const char* ErrnoName(int e) {
  switch (e) {
    case ENOSPC: return "ENOSPC";
    case EBADF: return "EBADF";
    case EIO: return "EIO";
    case EFBIG: return "EFBIG";
#ifdef EDQUOT  // not in Windows' errno.h
    case EDQUOT: return "EDQUOT";
#endif
    case EPIPE: return "EPIPE";
    case EINVAL: return "EINVAL";
    case ESPIPE: return "ESPIPE";
    case EROFS: return "EROFS";
    default: return "errno";
  }
}

}  // namespace

void FdWriter::WriteAll(const uint8_t* data, size_t n, int64_t offset, const char* what) {
  size_t done = 0;
  while (done < n) {
    int err = 0;
    const int64_t w =
        platform::Write(fd_, data + done, n - done, offset < 0 ? -1 : offset + static_cast<int64_t>(done), err);
    if (w <= 0) {
      const int e = w < 0 ? err : EIO;
      throw FormatError(
          codes::kTachyonWriteIo,
          std::string("writing the profile failed while ") + what + ": " + ErrnoName(e) + ": " + std::strerror(e), -1,
          "a writable, seekable file with room for the profile");
    }
    done += static_cast<size_t>(w);
    if (offset < 0) flushed_ += static_cast<uint64_t>(w);
  }
}

void FdWriter::Flush() {
  if (length_ == 0) return;
  // WriteAll counts the bytes that reached the kernel, even when a later write() fails.
  WriteAll(buffer_.data(), length_, -1, "flushing the write buffer");
  length_ = 0;
}

void FdWriter::Append(const uint8_t* data, size_t n) {
  if (n > buffer_.size() - length_) {
    Flush();
    if (n > buffer_.size()) {
      WriteAll(data, n, -1, "writing a large block");
      return;
    }
  }
  std::memcpy(buffer_.data() + length_, data, n);
  length_ += n;
}

void FdWriter::WriteAt(uint64_t offset, const uint8_t* data, size_t n) {
  Flush();
  WriteAll(data, n, static_cast<int64_t>(offset), "patching the header");
}

SampleEncoder::ThreadState& SampleEncoder::Thread(uint64_t threadId, uint32_t interpreterId) {
  const Key key{threadId, interpreterId};
  if (last_ != nullptr) {
    if (key == last_->key) return *last_;
    // A profiler lists its threads in the same order every tick: the thread that followed the
    // previous one last time is found without hashing.
    ThreadState* next = last_->next;
    if (next != nullptr && key == next->key) {
      last_ = next;
      return *next;
    }
  }
  auto found = index_.find(key);
  ThreadState* t;
  if (found == index_.end()) {
    auto state = std::make_unique<ThreadState>();
    std::memcpy(state->prefix, &threadId, 8);
    std::memcpy(state->prefix + 8, &interpreterId, 4);
    // A thread's first delta is relative to the header's start time (§3.1).
    state->timestamp = startTimeUs_;
    state->key = key;
    t = state.get();
    index_.emplace(key, threads_.size());
    threads_.push_back(std::move(state));
    counters_[kThreadCount] = static_cast<double>(threads_.size());
  } else {
    t = threads_[found->second].get();
  }
  if (last_ != nullptr) last_->next = t;
  last_ = t;
  return *t;
}

uint64_t SampleEncoder::NextDelta(ThreadState& t, uint64_t timestampUs) {
  // Per-thread delta in u64 arithmetic: an earlier timestamp wraps (§3.1).
  const uint64_t delta = timestampUs - t.timestamp;
  t.timestamp = timestampUs;
  counters_[kTotalSamples] += 1;
  return delta;
}

void SampleEncoder::AppendRepeat(ThreadState& t, uint64_t delta, uint8_t status) {
  if (t.repeatUsed + kRepeatEntryMax > kRepeatBufferSize) FlushRepeat(t);
  size_t pos = leb128::EncodeU64(delta, t.repeat, t.repeatUsed);
  t.repeat[pos++] = status;
  t.repeatUsed = pos;
  ++t.repeatCount;
}

void SampleEncoder::WriteStack(uint64_t threadId, uint32_t interpreterId, uint64_t timestampUs, uint8_t status,
                               const uint32_t* frames, uint32_t depth) {
  ThreadState& t = Thread(threadId, interpreterId);
  const uint64_t delta = NextDelta(t, timestampUs);

  const uint32_t prevDepth = t.depth;
  const uint32_t limit = depth < prevDepth ? depth : prevDepth;
  uint32_t shared = 0;
  while (shared < limit && frames[depth - 1 - shared] == t.stack[shared]) ++shared;

  if (shared == depth && shared == prevDepth) {
    AppendRepeat(t, delta, status);
    return;
  }
  if (t.repeatCount > 0) FlushRepeat(t);

  const uint32_t pop = prevDepth - shared;
  const uint32_t push = depth - shared;
  RecordKind kind;
  if (shared == 0) kind = RecordKind::kFull;
  else if (pop == 0) kind = RecordKind::kSuffix;
  else if (shared < depth / 2) kind = RecordKind::kFull;
  else kind = RecordKind::kPopPush;

  uint8_t* b = sink_.Reserve(kMaxStackRecord);
  std::memcpy(b, t.prefix, 12);
  size_t pos = 12;
  b[pos++] = static_cast<uint8_t>(kind);
  pos = leb128::EncodeU64(delta, b, pos);
  b[pos++] = status;
  uint32_t newCount;
  if (kind == RecordKind::kFull) {
    pos = leb128::EncodeU32(depth, b, pos);
    newCount = depth;
    counters_[kFullRecords] += 1;
  } else {
    pos = leb128::EncodeU32(kind == RecordKind::kSuffix ? shared : pop, b, pos);
    pos = leb128::EncodeU32(push, b, pos);
    newCount = push;
    counters_[kFramesSaved] += shared;
    counters_[kind == RecordKind::kSuffix ? kSuffixRecords : kPopPushRecords] += 1;
  }
  // The new frames are the innermost newCount, written innermost first.
  for (uint32_t i = 0; i < newCount; ++i) {
    const uint32_t f = frames[i];
    if (f < 0x80) b[pos++] = static_cast<uint8_t>(f);
    else pos = leb128::EncodeU32(f, b, pos);
  }
  sink_.Commit(pos);
  counters_[kFramesWritten] += newCount;
  counters_[kBytesWritten] += static_cast<double>(pos);

  // Outermost-first storage: only the frames above the shared bottom change.
  const uint32_t from = kind == RecordKind::kFull ? 0 : shared;
  for (uint32_t j = from; j < depth; ++j) t.stack[j] = frames[depth - 1 - j];
  t.depth = depth;
}

void SampleEncoder::WriteBatch(const uint32_t* words, size_t count) {
  size_t i = 0;
  while (i < count) {
    if (count - i < 7) throw FormatError(codes::kInvalidArgument, "staged sample cut short", static_cast<int64_t>(i));
    const uint64_t tid = uint64_t{words[i]} | (uint64_t{words[i + 1]} << 32);
    const uint32_t interp = words[i + 2];
    const uint64_t ts = uint64_t{words[i + 3]} | (uint64_t{words[i + 4]} << 32);
    const uint8_t status = static_cast<uint8_t>(words[i + 5]);
    const uint32_t depth = words[i + 6];
    if (depth == kSameStack) {
      ThreadState& t = Thread(tid, interp);
      AppendRepeat(t, NextDelta(t, ts), status);
      i += 7;
      continue;
    }
    if (depth > kMaxStackDepth || count - i - 7 < depth) {
      throw FormatError(codes::kInvalidArgument, "staged sample has a bad depth", static_cast<int64_t>(i));
    }
    WriteStack(tid, interp, ts, status, words + i + 7, depth);
    i += 7 + depth;
  }
}

void SampleEncoder::WriteStacks(const TickRecord& tick) {
  const size_t count = tick.count;
  const uint32_t* ends = tick.ends;
  const uint32_t* ids = tick.ids;
  const size_t idCount = tick.idCount;
  const uint32_t frameCount = tick.frameCount;
  uint32_t start = 0;
  for (size_t k = 0; k < count; ++k) {
    const uint32_t end = ends[k];
    if (end < start || end > idCount) {
      throw FormatError(codes::kInvalidArgument, "stack ends must not decrease nor pass the frame ids",
                        static_cast<int64_t>(k));
    }
    const uint32_t last = end - start < kMaxStackDepth ? end : start + static_cast<uint32_t>(kMaxStackDepth);
    uint32_t bad = 0;  // branch-free: one test per stack
    for (uint32_t i = start; i < last; ++i) bad |= static_cast<uint32_t>(ids[i] >= frameCount);
    if (bad) {
      for (uint32_t i = start; i < last; ++i) {
        if (ids[i] >= frameCount) {
          throw FormatError(codes::kTachyonWriteUnknownId,
                            "frame id " + std::to_string(ids[i]) + " at index " + std::to_string(i) +
                                " was not returned by internFrame",
                            -1, "an integer in [0, " + std::to_string(frameCount) + ")");
        }
      }
    }
    start = end;
  }
  start = 0;
  for (size_t k = 0; k < count; ++k) {
    const uint32_t end = ends[k];
    const uint32_t depth = end - start < kMaxStackDepth ? end - start : static_cast<uint32_t>(kMaxStackDepth);
    const uint64_t tid = uint64_t{tick.threadIdWords[2 * k]} | (uint64_t{tick.threadIdWords[2 * k + 1]} << 32);
    WriteStack(tid, tick.interpreterIds[k], tick.timestampUs, static_cast<uint8_t>(tick.statuses[k]), ids + start,
               depth);
    start = end;
  }
}

size_t SampleEncoder::EncodeRepeat(const ThreadState& t, uint8_t* b) {
  std::memcpy(b, t.prefix, 12);
  size_t pos = 12;
  b[pos++] = static_cast<uint8_t>(RecordKind::kRepeat);
  pos = leb128::EncodeU32(t.repeatCount, b, pos);
  std::memcpy(b + pos, t.repeat, t.repeatUsed);
  return pos + t.repeatUsed;
}

void SampleEncoder::FlushRepeat(ThreadState& t) {
  const size_t pos = EncodeRepeat(t, sink_.Reserve(kMaxRepeatRecord));
  sink_.Commit(pos);
  counters_[kRepeatRecords] += 1;
  counters_[kRepeatSamples] += t.repeatCount;
  counters_[kFramesSaved] += static_cast<double>(t.depth) * t.repeatCount;
  counters_[kBytesWritten] += static_cast<double>(pos);
  t.repeatUsed = 0;
  t.repeatCount = 0;
}

std::vector<uint8_t> SampleEncoder::PendingRepeats() const {
  std::vector<uint8_t> out;
  for (const auto& t : threads_) {
    if (t->repeatCount == 0) continue;
    const size_t at = out.size();
    out.resize(at + kMaxRepeatRecord);
    out.resize(at + EncodeRepeat(*t, out.data() + at));
  }
  return out;
}

void SampleEncoder::FlushRepeats() {
  for (auto& t : threads_) {
    if (t->repeatCount > 0) FlushRepeat(*t);
  }
}

}  // namespace tachyon
}  // namespace profpack
