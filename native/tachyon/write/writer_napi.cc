// N-API glue for the native Tachyon writer (writer.h): one object per open
// profile. Samples arrive in batches staged by lib/tachyon/write/engines/native.ts
// (one crossing per batch); under compression each 4 MiB of records is handed
// to a JS callback that runs zstd-napi and returns the compressed bytes.
#include <napi.h>

#include <cstring>
#include <memory>

#include "common/errors.h"
#include "common/module_registry.h"
#include "common/typed_array.h"
#include "tachyon/write/writer.h"

namespace profpack {
namespace {

using tachyon::CompressingSink;
using tachyon::FdWriter;
using tachyon::SampleEncoder;

class NativeProfileWriter : public Napi::ObjectWrap<NativeProfileWriter> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "NativeProfileWriter",
        {InstanceMethod("encode", &NativeProfileWriter::Encode),
         InstanceMethod("encodeTick", &NativeProfileWriter::EncodeTick),
         InstanceMethod("finishSamples", &NativeProfileWriter::FinishSamples),
         InstanceMethod("flushSamples", &NativeProfileWriter::FlushSamples),
         InstanceMethod("write", &NativeProfileWriter::Write), InstanceMethod("writeAt", &NativeProfileWriter::WriteAt),
         InstanceMethod("flush", &NativeProfileWriter::Flush),
         InstanceMethod("position", &NativeProfileWriter::Position),
         InstanceMethod("counters", &NativeProfileWriter::Counters),
         InstanceMethod("discard", &NativeProfileWriter::Discard),
         InstanceMethod("release", &NativeProfileWriter::Release),
         InstanceMethod("pendingRepeats", &NativeProfileWriter::PendingRepeats)});
  }

  // new NativeProfileWriter(fd, startLo, startHi, compress?: (chunk, directive 0 continue | 1 flush | 2 end) =>
  // Uint8Array)
  explicit NativeProfileWriter(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NativeProfileWriter>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsNumber()) {
      throw Napi::TypeError::New(env, "NativeProfileWriter(fd, startLo, startHi, compress?)");
    }
    const int fd = info[0].As<Napi::Number>().Int32Value();
    const uint64_t start =
        uint64_t{info[1].As<Napi::Number>().Uint32Value()} | (uint64_t{info[2].As<Napi::Number>().Uint32Value()} << 32);
    int err = 0;  // a number that is no open file fails at the first write, as write() would with EBADF
    file_ = std::make_unique<FdWriter>(platform::FromNodeFd(fd, err));
    tachyon::RecordSink* records = file_.get();
    if (info.Length() > 3 && info[3].IsFunction()) {
      compress_ = Napi::Persistent(info[3].As<Napi::Function>());
      compressing_ =
          std::make_unique<CompressingSink>([this](uint8_t* data, size_t n, tachyon::ZstdDirective directive) {
            Napi::Env e = compress_.Env();
            // The sink's own bytes, not a copy (a copy where the runtime allows no external buffers), detached
            // once the call returns, so that no JS reference to them outlives it.
            Napi::Uint8Array chunk = n == 0 ? Napi::Uint8Array::New(e, 0)
                                            : Napi::Buffer<uint8_t>::NewOrCopy(e, data, n).As<Napi::Uint8Array>();
            struct Detach {  // also when the callback throws; a status, never an exception, from a destructor
              napi_env env;
              napi_value bytes;
              ~Detach() { napi_detach_arraybuffer(env, bytes); }
            } detach{e, chunk.ArrayBuffer()};
            Napi::Value out = compress_.Call({chunk, Napi::Number::New(e, static_cast<int>(directive))});
            const RawView view = ViewOfType(out, napi_uint8_array, "compressed chunk");
            file_->Append(view.data, view.length);
            // Each chunk of records reaches the file as soon as it is compressed.
            if (directive != tachyon::ZstdDirective::kEnd) file_->Flush();
          });
      records = compressing_.get();
    }
    encoder_ = std::make_unique<SampleEncoder>(*records, start);
  }

 private:
  // encode(words: Uint32Array, count)
  Napi::Value Encode(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    Napi::Env env = info.Env();
    const RawView words = ViewOfType(info[0], napi_uint32_array, "words");
    const size_t count = IndexArg(info, 1, "count");
    if (count > words.length) throw Napi::RangeError::New(env, "count exceeds the staged words");
    return Guarded(env, [&]() -> Napi::Value {
      encoder_->WriteBatch(reinterpret_cast<const uint32_t*>(words.data), count);
      return env.Undefined();
    });
  }

  // encodeTick(words: Uint32Array (a TickRecord), ids: Uint32Array)
  Napi::Value EncodeTick(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    Napi::Env env = info.Env();
    const RawView words = ViewOfType(info[0], napi_uint32_array, "tick record");
    const RawView ids = ViewOfType(info[1], napi_uint32_array, "frame ids");
    tachyon::TickRecord tick;
    if (!tick.Read(reinterpret_cast<const uint32_t*>(words.data), words.length,
                   reinterpret_cast<const uint32_t*>(ids.data), ids.length)) {
      throw Napi::RangeError::New(env, "the tick record is shorter than its count");
    }
    return Guarded(env, [&]() -> Napi::Value {
      encoder_->WriteStacks(tick);
      return env.Undefined();
    });
  }

  Napi::Value FinishSamples(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    Napi::Env env = info.Env();
    return Guarded(env, [&]() -> Napi::Value {
      encoder_->FlushRepeats();
      if (compressing_) compressing_->Finish();
      return env.Undefined();
    });
  }

  // Every finished record to the file (pending REPEAT runs stay in the encoder).
  Napi::Value FlushSamples(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    Napi::Env env = info.Env();
    return Guarded(env, [&]() -> Napi::Value {
      if (compressing_) compressing_->Flush();
      file_->Flush();
      return env.Undefined();
    });
  }

  Napi::Value Write(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    Napi::Env env = info.Env();
    const RawView bytes = ViewOfType(info[0], napi_uint8_array, "bytes");
    return Guarded(env, [&]() -> Napi::Value {
      file_->Append(bytes.data, bytes.length);
      return env.Undefined();
    });
  }

  Napi::Value WriteAt(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    Napi::Env env = info.Env();
    const size_t offset = IndexArg(info, 0, "offset");
    const RawView bytes = ViewOfType(info[1], napi_uint8_array, "bytes");
    return Guarded(env, [&]() -> Napi::Value {
      file_->WriteAt(offset, bytes.data, bytes.length);
      return env.Undefined();
    });
  }

  Napi::Value Flush(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    Napi::Env env = info.Env();
    return Guarded(env, [&]() -> Napi::Value {
      file_->Flush();
      return env.Undefined();
    });
  }

  Napi::Value Position(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    return Napi::Number::New(info.Env(), static_cast<double>(file_->Position()));
  }

  Napi::Value Counters(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    Napi::Env env = info.Env();
    return CopyOut(env, encoder_->counters(), tachyon::kCounterCount);
  }

  Napi::Value Discard(const Napi::CallbackInfo& info) {
    if (file_) file_->Discard();
    if (compressing_) compressing_->Discard();
    return info.Env().Undefined();
  }

  // Frees the buffers (4.5 MiB with zstd), the threads' state and the compressor
  // callback now: Node runs this object's finalizer only on a later event-loop
  // turn, so a synchronous loop of writers would otherwise keep them all.
  Napi::Value Release(const Napi::CallbackInfo& info) {
    encoder_.reset();
    compressing_.reset();
    file_.reset();
    compress_.Reset();
    return info.Env().Undefined();
  }

  Napi::Value PendingRepeats(const Napi::CallbackInfo& info) {
    CheckLive(info.Env());
    const std::vector<uint8_t> bytes = encoder_->PendingRepeats();
    Napi::Uint8Array out = Napi::Uint8Array::New(info.Env(), bytes.size());
    if (!bytes.empty()) std::memcpy(out.Data(), bytes.data(), bytes.size());
    return out;
  }

  void CheckLive(Napi::Env env) const {
    if (!encoder_) throw Napi::Error::New(env, "the native writer was released");
  }

  std::unique_ptr<FdWriter> file_;
  std::unique_ptr<CompressingSink> compressing_;
  std::unique_ptr<SampleEncoder> encoder_;
  Napi::FunctionReference compress_;
};

void InitTachyonWriter(Napi::Env env, Napi::Object exports) {
  exports.Set("NativeProfileWriter", NativeProfileWriter::Define(env));
}

PROFPACK_REGISTER_MODULE("tachyonWriter", {}, InitTachyonWriter);

}  // namespace
}  // namespace profpack
