// V8's sampling heap profiler through V8's own C++ API, without the forced GC
// that the inspector's HeapProfiler.startSampling always asks for
// (kSamplingForceGC): a poll here walks the allocation tree and copies the live
// samples, and dead objects leave the profile at V8's own next GC.
//
// V8's API is not ABI-stable, so this addon is built per Node major, apart from
// the N-API addon (binding.gyp's profpack_heap target; scripts/native-sources.js
// leaves native/heap/ out). lib/record/program/heap/probe.ts loads it when it matches.
//
// Objects that die between two polls: with `captureAtGc` (start's second
// argument) a GC prologue callback looks at the profile before each scavenge or
// mark-compact, the only moments a sampled object can die, and keeps the
// samples born since it last looked with their allocation nodes (a copy, as V8
// deletes a node with its last sample). The next poll hands back those no longer
// live as `collected*` columns, so every sampled object is seen with its stack
// and a free exact to the GC. What is kept is bounded by kMaxPending samples
// between two polls; past it the rest stay counted as short-lived only.
// V8's includeObjectsCollectedByMajorGC/MinorGC flags would keep the stacks too,
// but then V8 never drops a sample and nothing tells the dead from the live.
//
// A poll comes back as flat typed arrays and a string table, so that the JS side
// converts only the allocation nodes it has not met before:
//   nodes, pre-order (a parent before its children): nodeIds, parentIds
//   (kNoParent for the root), nameIds and urlIds (into strings), scriptIds,
//   lines and columns (0-based, -1 unknown, as the inspector gives them);
//   samples: ordinals (V8's sample_id, the inspector's ordinal), sizes
//   (V8's raw sizes; the inspector's are size x count, undone in sampler.ts), sampleNodes.
#include <node.h>
#include <v8-profiler.h>
#include <v8.h>

#include <time.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace profpack_heap {

namespace {

constexpr uint32_t kNoParent = 0xffffffffu;
// V8's own cap on a sampled stack (kMaxFramesCount's order); the inspector asks for 128 too.
constexpr int kStackDepth = 128;
constexpr int kNodeColumns = 7;
constexpr int kSampleColumns = 3;
// Samples born since the last poll kept at most (12 bytes each, plus copies of their nodes): 768 KiB.
constexpr size_t kMaxPending = 65536;

// Distinct strings of one poll, by content: V8's string hash picks a bucket, equality decides.
class StringTable {
 public:
  explicit StringTable(v8::Isolate* isolate) : isolate_(isolate) {}

  uint32_t Id(v8::Local<v8::String> s) {
    if (s.IsEmpty()) s = v8::String::Empty(isolate_);
    std::vector<uint32_t>& bucket = byHash_[s->GetIdentityHash()];
    for (uint32_t id : bucket) {
      if (strings_[id]->StringEquals(s)) return id;
    }
    auto id = static_cast<uint32_t>(strings_.size());
    strings_.push_back(s);
    bucket.push_back(id);
    return id;
  }

  v8::Local<v8::Array> ToArray() {
    return v8::Array::New(isolate_, reinterpret_cast<v8::Local<v8::Value>*>(strings_.data()), strings_.size());
  }

 private:
  v8::Isolate* isolate_;
  std::vector<v8::Local<v8::String>> strings_;
  std::unordered_map<int, std::vector<uint32_t>> byHash_;
};

// One ArrayBuffer cut into `columns` views of `count` 32-bit values each (column-major).
class Columns {
 public:
  Columns(v8::Isolate* isolate, size_t count, int columns) : count_(count) {
    size_t bytes = count * columns * sizeof(uint32_t);
    buffer_ = v8::ArrayBuffer::New(isolate, bytes == 0 ? 1 : bytes);
    data_ = static_cast<uint32_t*>(buffer_->GetBackingStore()->Data());
  }

  uint32_t* Column(int c) { return data_ + c * count_; }

  void SetUint32(v8::Isolate* isolate, v8::Local<v8::Object> out, const char* name, int c) {
    auto view = v8::Uint32Array::New(buffer_, c * count_ * sizeof(uint32_t), count_);
    out->Set(isolate->GetCurrentContext(), Name(isolate, name), view).Check();
  }

  void SetInt32(v8::Isolate* isolate, v8::Local<v8::Object> out, const char* name, int c) {
    auto view = v8::Int32Array::New(buffer_, c * count_ * sizeof(uint32_t), count_);
    out->Set(isolate->GetCurrentContext(), Name(isolate, name), view).Check();
  }

  static v8::Local<v8::String> Name(v8::Isolate* isolate, const char* name) {
    return v8::String::NewFromUtf8(isolate, name, v8::NewStringType::kInternalized).ToLocalChecked();
  }

 private:
  size_t count_;
  v8::Local<v8::ArrayBuffer> buffer_;
  uint32_t* data_;
};

// An allocation node as a GC prologue saw it, copied: V8 may delete it before the next poll.
struct NodeCopy {
  uint32_t id;
  uint32_t parent;
  std::string name;
  std::string url;
  int32_t script;
  int32_t line;
  int32_t column;
};

struct PendingSample {
  uint32_t ordinal;
  uint32_t size;
  uint32_t node;
};

// A look costs a read of V8's whole profile (~0.2 ms on a small heap, ~4 ms for 9,000 live samples). Looks are paced
// by a budget: once the last look cost more than kCheapLookNs, the next waits while all looks so far took more than
// 1/kLookShare of the thread's CPU since the capture started, so that on a big live set looks take at most ~5 % of
// the thread's CPU, as polls do (recorder.ts's NATIVE_POLL_SHARE); a GC skipped counts its new dead samples as
// short-lived only. Cheaper looks are never skipped: pacing those lost a third of the garbage's stacks on
// test/fixtures/heap/garbage-maker.js, where looking at every GC cost ~5 %. A budget and not a wait after each
// dear look: one look slowed by a loaded machine (a preempted VM's thread clock runs on) cost ~100 of the garbage
// maker's ~2,100 stacks when it made the next 20 ms of looks wait.
constexpr int64_t kLookShare = 20;
constexpr int64_t kCheapLookNs = 1000000;

// This thread's CPU time: a look preempted on a loaded machine costs no more for it, and the share is of the CPU
// the program's own thread uses.
int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// What the GC prologue keeps for one isolate between two polls.
struct GcCapture {
  v8::Isolate* isolate;
  int64_t startNs = 0;       // the thread's CPU when the capture started
  int64_t spentNs = 0;       // the thread's CPU all looks took
  int64_t lastLookNs = 0;    // the last look's cost
  uint64_t lastOrdinal = 0;  // the highest sample id seen by a prologue or a poll
  std::vector<PendingSample> samples;
  std::vector<NodeCopy> nodes;  // a parent before its children
  std::unordered_map<uint32_t, bool> nodeKnown;
};

std::string Utf8(v8::Isolate* isolate, v8::Local<v8::String> s) {
  if (s.IsEmpty()) return std::string();
  v8::String::Utf8Value value(isolate, s);
  return *value == nullptr ? std::string() : std::string(*value, value.length());
}

uint32_t ClampSize(size_t size) { return size > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(size); }

void OnGcPrologue(v8::Isolate* isolate, v8::GCType type, v8::GCCallbackFlags, void* data) {
  // Incremental marking's start and the weak callbacks' pass free nothing by themselves.
  if ((type & (v8::kGCTypeIncrementalMarking | v8::kGCTypeProcessWeakCallbacks)) != 0) return;
  auto* capture = static_cast<GcCapture*>(data);
  if (capture->samples.size() >= kMaxPending) return;
  int64_t started = NowNs();
  if (capture->lastLookNs > kCheapLookNs && capture->spentNs * kLookShare > started - capture->startNs) return;
  struct Paced {
    GcCapture* capture;
    int64_t started;
    ~Paced() {
      int64_t cost = NowNs() - started;
      capture->lastLookNs = cost;
      capture->spentNs += cost;
    }
  } paced{capture, started};
  v8::HandleScope scope(isolate);
  std::unique_ptr<v8::AllocationProfile> profile(isolate->GetHeapProfiler()->GetAllocationProfile());
  if (!profile) return;
  const std::vector<v8::AllocationProfile::Sample>& list = profile->GetSamples();
  uint64_t newest = capture->lastOrdinal;
  bool any = false;
  for (const v8::AllocationProfile::Sample& s : list) {
    if (s.sample_id > capture->lastOrdinal) {
      any = true;
      break;
    }
  }
  if (!any) return;
  // Each node's parent and place, to copy the path of a new sample's node from the root.
  std::unordered_map<uint32_t, std::pair<const v8::AllocationProfile::Node*, uint32_t>> byId;
  std::vector<std::pair<const v8::AllocationProfile::Node*, uint32_t>> pending{{profile->GetRootNode(), kNoParent}};
  while (!pending.empty()) {
    auto [node, parent] = pending.back();
    pending.pop_back();
    byId[node->node_id] = {node, parent};
    for (const v8::AllocationProfile::Node* child : node->children) pending.emplace_back(child, node->node_id);
  }
  std::vector<uint32_t> path;
  for (const v8::AllocationProfile::Sample& s : list) {
    if (s.sample_id <= capture->lastOrdinal || capture->samples.size() >= kMaxPending) continue;
    if (s.sample_id > newest) newest = s.sample_id;
    capture->samples.push_back({static_cast<uint32_t>(s.sample_id), ClampSize(s.size), s.node_id});
    path.clear();
    for (uint32_t id = s.node_id; id != kNoParent && capture->nodeKnown.count(id) == 0;) {
      auto it = byId.find(id);
      if (it == byId.end()) break;
      path.push_back(id);
      id = it->second.second;
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      auto [node, parent] = byId[*it];
      capture->nodeKnown[*it] = true;
      capture->nodes.push_back({node->node_id, parent, Utf8(isolate, node->name), Utf8(isolate, node->script_name),
                                node->script_id, node->line_number - 1, node->column_number - 1});
    }
  }
  capture->lastOrdinal = newest;
}

// One capture per isolate that started sampling with captureAtGc (workers are isolates of their own).
std::mutex capturesMutex;
std::unordered_map<v8::Isolate*, std::unique_ptr<GcCapture>> captures;

void ReleaseCapture(GcCapture* capture) {
  capture->isolate->RemoveGCPrologueCallback(OnGcPrologue, capture);
  std::lock_guard<std::mutex> lock(capturesMutex);
  captures.erase(capture->isolate);
}

// The isolate's environment is torn down (a worker that ended without stop()).
void OnCleanup(void* arg) { ReleaseCapture(static_cast<GcCapture*>(arg)); }

GcCapture* FindCapture(v8::Isolate* isolate) {
  std::lock_guard<std::mutex> lock(capturesMutex);
  auto it = captures.find(isolate);
  return it == captures.end() ? nullptr : it->second.get();
}

void StopCapture(v8::Isolate* isolate) {
  GcCapture* capture = FindCapture(isolate);
  if (capture == nullptr) return;
  node::RemoveEnvironmentCleanupHook(isolate, OnCleanup, capture);
  ReleaseCapture(capture);
}

void StartCapture(v8::Isolate* isolate) {
  StopCapture(isolate);
  auto capture = std::make_unique<GcCapture>();
  capture->isolate = isolate;
  capture->startNs = NowNs();
  GcCapture* raw = capture.get();
  {
    std::lock_guard<std::mutex> lock(capturesMutex);
    captures[isolate] = std::move(capture);
  }
  isolate->AddGCPrologueCallback(OnGcPrologue, raw, v8::kGCTypeAll);
  node::AddEnvironmentCleanupHook(isolate, OnCleanup, raw);
}

size_t CountNodes(const v8::AllocationProfile::Node* root) {
  size_t count = 0;
  std::vector<const v8::AllocationProfile::Node*> pending{root};
  while (!pending.empty()) {
    const v8::AllocationProfile::Node* node = pending.back();
    pending.pop_back();
    count++;
    for (const v8::AllocationProfile::Node* child : node->children) pending.push_back(child);
  }
  return count;
}

void Start(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  double interval = info.Length() > 0 && info[0]->IsNumber() ? info[0].As<v8::Number>()->Value() : 0;
  if (!(interval >= 1 && interval <= 4294967295.0)) {
    isolate->ThrowException(v8::Exception::RangeError(Columns::Name(isolate, "start(intervalBytes): bad interval")));
    return;
  }
  bool captureAtGc = info.Length() > 1 && info[1]->IsTrue();
  bool started = isolate->GetHeapProfiler()->StartSamplingHeapProfiler(static_cast<uint64_t>(interval), kStackDepth,
                                                                       v8::HeapProfiler::kSamplingNoFlags);
  if (started && captureAtGc) StartCapture(isolate);
  info.GetReturnValue().Set(started);
}

void Stop(const v8::FunctionCallbackInfo<v8::Value>& info) {
  StopCapture(info.GetIsolate());
  info.GetIsolate()->GetHeapProfiler()->StopSamplingHeapProfiler();
}

void Poll(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::HandleScope scope(isolate);
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  std::unique_ptr<v8::AllocationProfile> profile(isolate->GetHeapProfiler()->GetAllocationProfile());
  if (!profile) return;  // not sampling: undefined
  const v8::AllocationProfile::Node* root = profile->GetRootNode();

  // The samples a GC prologue kept that are live no more (collected since), and their nodes V8 no longer has.
  GcCapture* capture = FindCapture(isolate);
  std::vector<PendingSample> collected;
  std::vector<NodeCopy> goneNodes;
  const std::vector<v8::AllocationProfile::Sample>& list = profile->GetSamples();
  if (capture != nullptr) {
    // Taken before this poll allocates anything: a GC its allocations cause keeps what it sees for the next poll.
    std::vector<PendingSample> kept;
    std::vector<NodeCopy> keptNodes;
    kept.swap(capture->samples);
    keptNodes.swap(capture->nodes);
    capture->nodeKnown.clear();
    std::unordered_map<uint32_t, bool> live;
    for (const v8::AllocationProfile::Sample& s : list) {
      live[static_cast<uint32_t>(s.sample_id)] = true;
      if (s.sample_id > capture->lastOrdinal) capture->lastOrdinal = s.sample_id;
    }
    for (const PendingSample& s : kept) {
      if (live.count(s.ordinal) == 0) collected.push_back(s);
    }
    std::unordered_map<uint32_t, bool> present;
    std::vector<const v8::AllocationProfile::Node*> walk{root};
    while (!walk.empty()) {
      const v8::AllocationProfile::Node* node = walk.back();
      walk.pop_back();
      present[node->node_id] = true;
      for (const v8::AllocationProfile::Node* child : node->children) walk.push_back(child);
    }
    for (NodeCopy& node : keptNodes) {
      if (present.count(node.id) == 0) goneNodes.push_back(std::move(node));
    }
  }

  StringTable strings(isolate);
  Columns nodes(isolate, CountNodes(root) + goneNodes.size(), kNodeColumns);
  uint32_t* ids = nodes.Column(0);
  uint32_t* parents = nodes.Column(1);
  uint32_t* names = nodes.Column(2);
  uint32_t* urls = nodes.Column(3);
  uint32_t* scripts = nodes.Column(4);
  uint32_t* lines = nodes.Column(5);
  uint32_t* columns = nodes.Column(6);
  std::vector<std::pair<const v8::AllocationProfile::Node*, uint32_t>> pending{{root, kNoParent}};
  size_t at = 0;
  while (!pending.empty()) {
    auto [node, parent] = pending.back();
    pending.pop_back();
    ids[at] = node->node_id;
    parents[at] = parent;
    names[at] = strings.Id(node->name);
    urls[at] = strings.Id(node->script_name);
    scripts[at] = static_cast<uint32_t>(node->script_id);
    lines[at] = static_cast<uint32_t>(node->line_number - 1);
    columns[at] = static_cast<uint32_t>(node->column_number - 1);
    at++;
    for (auto it = node->children.rbegin(); it != node->children.rend(); ++it) pending.emplace_back(*it, node->node_id);
  }
  // After the tree: each copy's parent is in the tree or an earlier copy.
  auto utf8 = [&](const std::string& text) {
    return v8::String::NewFromUtf8(isolate, text.data(), v8::NewStringType::kNormal, static_cast<int>(text.size()))
        .ToLocalChecked();
  };
  for (const NodeCopy& node : goneNodes) {
    ids[at] = node.id;
    parents[at] = node.parent;
    names[at] = strings.Id(utf8(node.name));
    urls[at] = strings.Id(utf8(node.url));
    scripts[at] = static_cast<uint32_t>(node.script);
    lines[at] = static_cast<uint32_t>(node.line);
    columns[at] = static_cast<uint32_t>(node.column);
    at++;
  }

  Columns samples(isolate, list.size(), kSampleColumns);
  uint32_t* ordinals = samples.Column(0);
  uint32_t* sizes = samples.Column(1);
  uint32_t* sampleNodes = samples.Column(2);
  for (size_t i = 0; i < list.size(); i++) {
    const v8::AllocationProfile::Sample& s = list[i];
    ordinals[i] = static_cast<uint32_t>(s.sample_id);
    // The raw size: the reader scales each sample by 1/p once (unsampledWeight); size x count is already scaled.
    sizes[i] = ClampSize(s.size);
    sampleNodes[i] = s.node_id;
  }
  Columns gone(isolate, collected.size(), kSampleColumns);
  for (size_t i = 0; i < collected.size(); i++) {
    gone.Column(0)[i] = collected[i].ordinal;
    gone.Column(1)[i] = collected[i].size;
    gone.Column(2)[i] = collected[i].node;
  }
  v8::Local<v8::Object> out = v8::Object::New(isolate);
  nodes.SetUint32(isolate, out, "nodeIds", 0);
  nodes.SetUint32(isolate, out, "parentIds", 1);
  nodes.SetUint32(isolate, out, "nameIds", 2);
  nodes.SetUint32(isolate, out, "urlIds", 3);
  nodes.SetInt32(isolate, out, "scriptIds", 4);
  nodes.SetInt32(isolate, out, "lines", 5);
  nodes.SetInt32(isolate, out, "columns", 6);
  out->Set(ctx, Columns::Name(isolate, "strings"), strings.ToArray()).Check();
  samples.SetUint32(isolate, out, "ordinals", 0);
  samples.SetUint32(isolate, out, "sizes", 1);
  samples.SetUint32(isolate, out, "sampleNodes", 2);
  if (capture != nullptr) {
    gone.SetUint32(isolate, out, "collectedOrdinals", 0);
    gone.SetUint32(isolate, out, "collectedSizes", 1);
    gone.SetUint32(isolate, out, "collectedNodes", 2);
  }
  info.GetReturnValue().Set(out);
}

}  // namespace

}  // namespace profpack_heap

// Context-aware: each worker thread (its own isolate) may load it and sample its own heap.
NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();  // Context::GetIsolate is gone in Node 26's V8
  auto set = [&](const char* name, v8::FunctionCallback fn) {
    v8::Local<v8::Function> f = v8::Function::New(context, fn).ToLocalChecked();
    exports->Set(context, profpack_heap::Columns::Name(isolate, name), f).Check();
  };
  set("start", profpack_heap::Start);
  set("poll", profpack_heap::Poll);
  set("stop", profpack_heap::Stop);
  exports
      ->Set(context, profpack_heap::Columns::Name(isolate, "nodeMajor"), v8::Integer::New(isolate, NODE_MAJOR_VERSION))
      .Check();
}
