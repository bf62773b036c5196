// The GPU selection engine: codes resident on one or more devices (or streamed in feature
// blocks when they do not fit), feature states and the argmax on the device; a step returns
// one candidate.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/gpu_backend.h"
#include "core/joint_counts.h"
#include "cuda_check.cuh"
#include "impurity_counts.cuh"
#include "joint_counts.cuh"

namespace fsgpu {

GpuStatus gpu_status() {
  GpuStatus status;
  status.compiled = true;
  cudaRuntimeGetVersion(&status.runtime_version);
  if (cudaDriverGetVersion(&status.driver_version) != cudaSuccess || status.driver_version == 0) {
    status.problem = "no NVIDIA driver found";
    return status;
  }
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    status.problem = std::string("no usable GPU: ") + cudaGetErrorString(err);
    return status;
  }
  for (int id = 0; id < count; ++id) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, id) != cudaSuccess) continue;
    GpuDevice d;
    d.id = id;
    d.name = prop.name;
    d.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
    d.major = prop.major;
    d.minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    size_t free_bytes = 0, total_bytes = 0;
    ScopedDevice on(id);
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) d.free_memory = static_cast<int64_t>(free_bytes);
    status.devices.push_back(d);
  }
  if (status.devices.empty()) status.problem = "no GPU found";
  return status;
}

namespace {

// A contiguous range of features and its codes, as the host holds them.
struct HostBlock {
  int64_t first = 0, last = 0;          // global feature indices
  int64_t entry_first = 0, entry_last = 0;
  int32_t max_levels = 1;
};

class Event {
 public:
  Event() { FSGPU_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Page-locked host memory that grows (never shrinks) to what a step needs.
template <class T>
class GrowingPinned {
 public:
  T* get(size_t n) {
    if (n > size_) {
      buffer_ = PinnedBuffer<T>(n);
      size_ = n;
    }
    return buffer_.data();
  }

 private:
  PinnedBuffer<T> buffer_;
  size_t size_ = 0;
};

// Dense rows on the device are padded to whole 16-byte vectors (see the counting kernel).
int64_t device_row_stride(const CodeMatrix& x) {
  const int64_t per_vector = 16 / static_cast<int64_t>(x.code_bytes());
  return (x.n_samples + per_vector - 1) / per_vector * per_vector;
}

// Device bytes of a block's codes alone, and with its sparse row indices and offsets.
int64_t code_bytes(const CodeMatrix& x, int64_t entries, int64_t features) {
  return (x.sparse ? entries : features * device_row_stride(x)) * static_cast<int64_t>(x.code_bytes());
}

int64_t block_bytes(const CodeMatrix& x, int64_t entries, int64_t features) {
  return code_bytes(x, entries, features) + (x.sparse ? entries * 4 + (features + 1) * 8 : 0);
}

// Host-to-device copies through page-locked staging: runs of rows of at most this many bytes.
constexpr size_t kStagingBytes = size_t(4) << 20;

// Byte codes sent up while they are encoded (CodeUpload), into rows laid out as the engine's
// (device_row_stride), for the engine to adopt. Each encoder worker copies its features into two
// staging buffers of its own, taking turns, and sends them on a stream of its own.
class CudaCodeUpload : public CodeUpload {
 public:
  CudaCodeUpload(int device, int32_t n_samples, int64_t n_features, int threads)
      : device_(device), n_samples_(n_samples), n_features_(n_features),
        pitch_((static_cast<size_t>(n_samples) + 15) / 16 * 16),
        per_run_(std::max<int64_t>(1, static_cast<int64_t>(kStagingBytes / std::max<size_t>(n_samples, 1)))),
        workers_(static_cast<size_t>(std::max(threads, 1))) {
    ScopedDevice on(device);
    codes_.resize(pitch_ * static_cast<size_t>(n_features));
  }
  ~CudaCodeUpload() override {
    for (auto& w : workers_)
      if (w) cudaStreamSynchronize(w->stream.get());  // before the staging buffers go
  }

  void send(const uint8_t* codes, int64_t first, int64_t last, int worker) override {
    ScopedDevice on(device_);
    std::unique_ptr<Worker>& w = workers_.at(static_cast<size_t>(worker));
    const size_t row = static_cast<size_t>(n_samples_);
    if (!w) w.reset(new Worker(static_cast<size_t>(per_run_) * row));
    for (int64_t at = first; at < last; at += per_run_) {
      const int64_t count = std::min(per_run_, last - at);
      const int i = static_cast<int>(w->turn++ % 2);
      if (w->turn > 2) FSGPU_CUDA_CHECK(cudaEventSynchronize(w->filled[i].get()));  // its last copy is done
      std::memcpy(w->staging[i].data(), codes + static_cast<size_t>(at) * row, static_cast<size_t>(count) * row);
      FSGPU_CUDA_CHECK(cudaMemcpy2DAsync(codes_.data() + static_cast<size_t>(at) * pitch_, pitch_, w->staging[i].data(),
                                         row, row, static_cast<size_t>(count), cudaMemcpyHostToDevice,
                                         w->stream.get()));
      FSGPU_CUDA_CHECK(cudaEventRecord(w->filled[i].get(), w->stream.get()));
    }
    sent_ += last - first;
  }

  // Whether x on `device` is what was sent: dense byte codes of this shape, every feature sent
  // (an encoder path that never called send() leaves nothing to adopt).
  bool matches(int device, const CodeMatrix& x) const {
    return device == device_ && !x.sparse && !x.wide && x.n_samples == n_samples_ && x.n_features == n_features_ &&
           sent_ == n_features_ && codes_.size() == pitch_ * static_cast<size_t>(n_features_);
  }
  size_t bytes() const { return codes_.size(); }
  // Waits for every copy, then hands the codes over (into: empty), or frees them (into: null).
  void finish(DeviceBuffer<uint8_t>* into) {
    ScopedDevice on(device_);
    for (auto& w : workers_)
      if (w) FSGPU_CUDA_CHECK(cudaStreamSynchronize(w->stream.get()));
    if (into) *into = std::move(codes_);
    codes_.resize(0);
  }

 private:
  struct Worker {
    explicit Worker(size_t bytes) : staging{PinnedBuffer<uint8_t>(bytes), PinnedBuffer<uint8_t>(bytes)} {}
    Stream stream;
    PinnedBuffer<uint8_t> staging[2];
    Event filled[2];
    int64_t turn = 0;
  };
  int device_;
  int32_t n_samples_;
  int64_t n_features_;
  size_t pitch_;
  int64_t per_run_;
  DeviceBuffer<uint8_t> codes_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<int64_t> sent_{0};  // features sent
};

// Splits [first, last) into blocks of at most `budget` bytes (at least one feature each).
std::vector<HostBlock> split_blocks(const CodeMatrix& x, int64_t first, int64_t last, int64_t budget) {
  std::vector<HostBlock> blocks;
  HostBlock b;
  b.first = first;
  b.entry_first = x.entries_begin(first);
  for (int64_t f = first; f < last; ++f) {
    const int64_t entries = x.entries_end(f) - b.entry_first;
    if (f > b.first && block_bytes(x, entries, f + 1 - b.first) > budget) {
      b.last = f;
      b.entry_last = x.entries_begin(f);
      blocks.push_back(b);
      b = HostBlock();
      b.first = f;
      b.entry_first = x.entries_begin(f);
    }
    b.max_levels = std::max<int32_t>(b.max_levels, x.levels[f]);
  }
  b.last = last;
  b.entry_last = x.entries_end(last - 1);
  blocks.push_back(b);
  return blocks;
}

// Device memory for one block's codes (the resident block, or a streaming buffer).
// Each buffer has its own stream and count-table scratch, so streamed blocks never share memory
// with a kernel still running on the other stream.
struct DeviceBlock {
  DeviceBuffer<uint8_t> codes;
  DeviceBuffer<int64_t> entry_start;
  DeviceBuffer<int32_t> entry_row;
  DeviceBuffer<uint32_t> scratch;
  DeviceBuffer<uint32_t> planes;  // resident dense blocks of few levels: bit planes (PlaneLayout)
  std::vector<int64_t> host_entry_start;  // block-relative, kept for the async upload
  const HostBlock* loaded = nullptr;

  void load(const CodeMatrix& x, const HostBlock& b, cudaStream_t stream) {
    const size_t entries = static_cast<size_t>(b.entry_last - b.entry_first);
    const uint8_t* host_codes =
        x.wide ? reinterpret_cast<const uint8_t*>(x.codes16.data() + b.entry_first) : x.codes8.data() + b.entry_first;
    if (!x.sparse) {
      const size_t row = static_cast<size_t>(x.n_samples) * x.code_bytes();
      const size_t pitch = static_cast<size_t>(device_row_stride(x)) * x.code_bytes();
      const size_t rows = static_cast<size_t>(b.last - b.first);
      codes.reserve(static_cast<size_t>(code_bytes(x, 0, b.last - b.first)));
      FSGPU_CUDA_CHECK(cudaMemcpy2DAsync(codes.data(), pitch, host_codes, row, row, rows, cudaMemcpyHostToDevice, stream));
    } else {
      codes.upload(host_codes, entries * x.code_bytes(), stream);
      host_entry_start.resize(static_cast<size_t>(b.last - b.first) + 1);
      for (int64_t f = b.first; f <= b.last; ++f) host_entry_start[f - b.first] = x.entry_start[f] - b.entry_first;
      entry_start.upload(host_entry_start.data(), host_entry_start.size(), stream);
      entry_row.upload(x.entry_row.data() + b.entry_first, entries, stream);
    }
    loaded = &b;
  }
};

class GpuEngine : public SelectionEngine {
 public:
  GpuEngine(const CodeMatrix& x, const ClassLayout& layout, const GpuOptions& options, Estimator estimator)
      : x_(x), layout_(layout), plogp_(layout.n_samples, estimator, options.host_threads),
        host_threads_(std::max(1, options.host_threads)),
        preloaded_(dynamic_cast<CudaCodeUpload*>(options.preloaded)) {
    if (!per_count_terms(estimator)) throw std::invalid_argument("the selection engines take per-count estimators only");
    if (options.devices.empty()) throw std::runtime_error("no GPU devices given");
    // Features split across devices in contiguous ranges of about equal bytes.
    const int n_dev = static_cast<int>(options.devices.size());
    int64_t f = 0;
    for (int d = 0; d < n_dev; ++d) {
      const int64_t target = x.n_entries() * (d + 1) / n_dev;
      int64_t last = f;
      while (last < x.n_features && (d == n_dev - 1 || x.entries_end(last) <= target)) ++last;
      devices_.emplace_back(new Device(options.devices[d], f, last));
      f = last;
    }
    // Codes sent while encoding that this engine cannot adopt (several devices, another shape)
    // are freed before any device's free memory is measured.
    if (preloaded_ && (devices_.size() != 1 || !preloaded_->matches(devices_[0]->id, x_))) {
      preloaded_->finish(nullptr);
      preloaded_ = nullptr;
    }
    for (auto& dev : devices_) init_device(*dev, options.memory_limit);
    // Codes streamed every step are pinned, for copies at full speed without staging.
    if (std::any_of(devices_.begin(), devices_.end(), [](const auto& dev) { return dev->buffers.size() > 1; })) {
      pins_.emplace_back(new PinnedRegion(x.wide ? static_cast<const void*>(x.codes16.data()) : x.codes8.data(),
                                          static_cast<size_t>(x.n_entries()) * x.code_bytes()));
      if (x.sparse) pins_.emplace_back(new PinnedRegion(x.entry_row.data(), x.entry_row.size() * 4));
    }
  }

  void score_pass(const Conditioning& s, const StepRule& rule) override {
    check_table_size(x_, s);
    for (auto& dev : devices_) launch_step(*dev, s, rule);
  }

  void retire(int64_t feature) override {
    for (auto& dev : devices_) {
      if (feature < dev->first || feature >= dev->last) continue;
      ScopedDevice on(dev->id);  // ordered before the next step, which synchronizes this stream first
      FSGPU_CUDA_CHECK(cudaMemsetAsync(dev->retired.data() + (feature - dev->first), 1, 1, dev->streams[0]->get()));
    }
  }

  // On one device holding every feature's codes, S's codes and n(s, y) are built there: no
  // host pass over N codes and no upload of them between steps, only n(s, y) read back.
  Conditioning condition_on(int64_t feature) override {
    const int64_t cells = int64_t(layout_.n_classes) * x_.levels[feature];
    if (devices_.size() != 1 || devices_[0]->buffers.size() != 1 || cells > INT32_MAX)
      return SelectionEngine::condition_on(feature);
    Device& dev = *devices_[0];
    ScopedDevice on(dev.id);
    cudaStream_t main = dev.streams[0]->get();
    Conditioning s;
    s.levels = x_.levels[feature];
    s.resident_feature = feature;
    const int32_t n = layout_.n_samples;
    dev.s_codes.reserve(static_cast<size_t>(n));
    uint8_t* s_codes8 = nullptr;
    if (narrow_codes(s.levels)) {
      dev.s_codes8.reserve(static_cast<size_t>(n + 15) / 16 * 16);
      s_codes8 = dev.s_codes8.data();
    }
    dev.s_class_counts.reserve(static_cast<size_t>(cells));
    const HostBlock& b = dev.blocks[0];
    launch_condition(view(dev, dev.buffers[0], b), feature - b.first, x_.entries_begin(feature) - b.entry_first,
                     x_.entries_end(feature) - x_.entries_begin(feature), x_.base[feature], s.levels,
                     dev.class_of.data(), layout_.n_classes, n, dev.s_codes.data(), s_codes8,
                     dev.s_class_counts.data(), main);
    dev.s_feature = feature;
    uint32_t* back = dev.host_class_counts.get(static_cast<size_t>(cells));
    FSGPU_CUDA_CHECK(cudaMemcpyAsync(back, dev.s_class_counts.data(), static_cast<size_t>(cells) * sizeof(uint32_t),
                                     cudaMemcpyDeviceToHost, main));
    FSGPU_CUDA_CHECK(cudaStreamSynchronize(main));
    s.class_counts.assign(back, back + cells);
    s.add_terms(layout_, plogp_);
    return s;
  }

  // condition_on() falls back to the host's codes with several devices or blocks, or with
  // tables past 32-bit cell indices (more than 32,768 classes).
  bool reads_host_codes() const override {
    return devices_.size() != 1 || devices_[0]->buffers.size() != 1 ||
           int64_t(layout_.n_classes) * x_.max_levels() > INT32_MAX;
  }

  // The argmax runs here, not after each pass: MIM's later steps make no pass, only retire.
  Candidate best_candidate() override {
    for (auto& dev : devices_) {
      if (dev->first == dev->last) continue;
      ScopedDevice on(dev->id);
      launch_best_candidate(dev->state.data(), dev->retired.data(), dev->last - dev->first, dev->partial.data(),
                            kBestPartials, dev->best.data(), dev->streams[0]->get());
      FSGPU_CUDA_CHECK(cudaMemcpyAsync(dev->host_best.data(), dev->best.data(), sizeof(DeviceCandidate),
                                       cudaMemcpyDeviceToHost, dev->streams[0]->get()));
    }
    Candidate best;
    for (auto& dev : devices_) {
      if (dev->first == dev->last) continue;
      ScopedDevice on(dev->id);
      FSGPU_CUDA_CHECK(cudaStreamSynchronize(dev->streams[0]->get()));
      const DeviceCandidate c = *dev->host_best.data();
      if (c.feature < 0) continue;
      const int64_t feature = c.feature + dev->first;  // devices hold ascending ranges
      if (best.feature < 0 || c.key > best.key) best = Candidate{feature, c.key};
    }
    return best;
  }

  std::vector<Wide> keys() override {
    std::vector<Wide> out(x_.n_features, 0);
    std::vector<FeatureState> state;
    for (auto& dev : devices_) {
      if (dev->first == dev->last) continue;
      ScopedDevice on(dev->id);
      FSGPU_CUDA_CHECK(cudaStreamSynchronize(dev->streams[0]->get()));
      state.resize(static_cast<size_t>(dev->last - dev->first));
      FSGPU_CUDA_CHECK(cudaMemcpy(state.data(), dev->state.data(), state.size() * sizeof(FeatureState),
                                  cudaMemcpyDeviceToHost));
      for (size_t f = 0; f < state.size(); ++f) out[dev->first + f] = state[f].key;
    }
    return out;
  }

  const CodeMatrix& codes() const override { return x_; }
  const ClassLayout& layout() const override { return layout_; }
  const PlogpTable& plogp() const override { return plogp_; }

 private:
  struct Device {
    Device(int id_, int64_t first_, int64_t last_) : id(id_), first(first_), last(last_) {}
    int id;
    int64_t first, last;  // global feature range
    std::vector<HostBlock> blocks;
    std::vector<DeviceBlock> buffers;  // one when resident, two when streaming
    std::vector<std::unique_ptr<Stream>> streams;
    std::vector<cudaEvent_t> done;
    DeviceBuffer<uint16_t> levels, base;
    DeviceBuffer<uint32_t> s_codes;
    DeviceBuffer<uint8_t> s_codes8;  // S's codes as bytes for the atomic count loop (levels(S) <= 256)
    PlaneLayout planes;              // levels 0: no bit planes
    DeviceBuffer<int32_t> class_words;
    DeviceBuffer<uint32_t> s_planes;
    DeviceBuffer<uint8_t> retired;
    DeviceBuffer<FeatureState> state;
    DeviceBuffer<uint32_t> s_class_counts, s_counts;
    DeviceBuffer<int32_t> class_start, class_of;
    DeviceBuffer<int64_t> plogp, s_class_terms;
    DeviceBuffer<DeviceCandidate> partial, best;
    PinnedBuffer<DeviceCandidate> host_best{1};
    int64_t s_feature = -1;  // the feature whose codes and n(s, y) s_codes, s_codes8, s_class_counts hold
    GrowingPinned<uint32_t> host_class_counts;
    GrowingPinned<uint8_t> host_step;  // S's n(s) and class terms, staged for their upload
    std::unique_ptr<Event> host_step_sent;  // recorded after host_step's last upload (made on the device)
    std::unique_ptr<Stream> side_stream;  // sparse passes: the small features' kernel (SideStream)
    std::unique_ptr<Event> side_fork, side_join;
    SideStream side() {
      if (!side_stream) {
        side_stream.reset(new Stream());
        side_fork.reset(new Event());
        side_join.reset(new Event());
      }
      return SideStream{side_stream->get(), side_fork->get(), side_join->get()};
    }
    std::map<std::pair<size_t, int32_t>, CountLayout> plans, impurity_plans;  // by (block, levels of S)
    ~Device() {
      ScopedDevice on(id);
      for (cudaEvent_t e : done) cudaEventDestroy(e);
    }
  };

  void init_device(Device& dev, int64_t memory_limit) {
    ScopedDevice on(dev.id);
    const int64_t n = dev.last - dev.first;
    dev.levels.upload(x_.levels.data() + dev.first, n);
    dev.base.upload(x_.base.data() + dev.first, n);
    dev.retired.resize(n);
    FSGPU_CUDA_CHECK(cudaMemset(dev.retired.data(), 0, n));
    dev.state.resize(n);
    FSGPU_CUDA_CHECK(cudaMemset(dev.state.data(), 0, n * sizeof(FeatureState)));
    dev.class_start.upload(layout_.class_start.data(), layout_.class_start.size());
    dev.class_of.upload(layout_.class_of.data(), layout_.class_of.size());
    dev.plogp.upload(plogp_.data(), plogp_.size());
    dev.partial.resize(kBestPartials);
    dev.best.resize(1);
    if (n == 0) {  // more devices than features: this one only reports "no candidate"
      const DeviceCandidate none{0, -1};
      FSGPU_CUDA_CHECK(cudaMemcpy(dev.best.data(), &none, sizeof none, cudaMemcpyHostToDevice));
      return;
    }
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    CudaCodeUpload* preloaded = preloaded_;  // one device, the codes of x (see the constructor)
    if (preloaded) free_bytes += preloaded->bytes();  // the engine's own codes, already there
    // Leave room for count tables, step data and the runtime.
    int64_t budget = static_cast<int64_t>(free_bytes) - (int64_t(512) << 20) - 8 * int64_t(layout_.n_samples);
    if (memory_limit > 0) budget = std::min(budget, memory_limit);
    const int64_t all = block_bytes(x_, x_.entries_end(dev.last - 1) - x_.entries_begin(dev.first), n);
    const bool resident = all <= budget;
    dev.blocks = split_blocks(x_, dev.first, dev.last, resident ? all : std::max<int64_t>(budget / 2, 1));
    const int n_buffers = resident ? 1 : 2;
    dev.buffers.resize(n_buffers);
    // Codes sent while encoding are the resident buffer's (sized as the loop below would size it).
    if (preloaded) preloaded->finish(resident ? &dev.buffers[0].codes : nullptr);
    int64_t largest_codes = 0, largest_entries = 0;  // streaming buffers are sized once, for the largest block
    for (const HostBlock& b : dev.blocks) {
      largest_codes = std::max(largest_codes, code_bytes(x_, b.entry_last - b.entry_first, b.last - b.first));
      largest_entries = std::max(largest_entries, b.entry_last - b.entry_first);
    }
    for (DeviceBlock& buf : dev.buffers) {
      buf.codes.resize(static_cast<size_t>(largest_codes));
      if (x_.sparse) buf.entry_row.resize(static_cast<size_t>(largest_entries));
    }
    for (int i = 0; i < n_buffers; ++i) {
      dev.streams.emplace_back(new Stream());
      cudaEvent_t e;
      FSGPU_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      dev.done.push_back(e);
    }
    if (resident && x_.sparse) dev.buffers[0].load(x_, dev.blocks[0], dev.streams[0]->get());
    if (resident && !x_.sparse && preloaded) dev.buffers[0].loaded = &dev.blocks[0];
    if (resident && !x_.sparse && !preloaded) upload_staged(dev);
    if (resident) make_planes(dev, budget - all);
    FSGPU_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The dense codes of a resident device, uploaded once: host threads copy runs of feature rows
  // into page-locked staging buffers, two each, and each buffer goes up while its thread fills
  // the other. Pinning the whole matrix in place instead costs more than copying it
  // (cudaHostRegister), and a copy from pageable memory runs at a fraction of the link's speed.
  void upload_staged(Device& dev) {
    DeviceBlock& buf = dev.buffers[0];
    const HostBlock& b = dev.blocks[0];
    const size_t row = static_cast<size_t>(x_.n_samples) * x_.code_bytes();
    const size_t pitch = static_cast<size_t>(device_row_stride(x_)) * x_.code_bytes();
    const int64_t rows = b.last - b.first;
    buf.codes.reserve(static_cast<size_t>(code_bytes(x_, 0, rows)));
    const uint8_t* host = (x_.wide ? reinterpret_cast<const uint8_t*>(x_.codes16.data()) : x_.codes8.data()) +
                          static_cast<size_t>(b.entry_first) * x_.code_bytes();
    uint8_t* device = static_cast<uint8_t*>(buf.codes.data());
    constexpr int kUploadThreads = 8;  // enough copies in flight to keep the link busy
    const int64_t per_run = std::max<int64_t>(1, static_cast<int64_t>(kStagingBytes / row));
    const int64_t runs = (rows + per_run - 1) / per_run;
    const int workers = static_cast<int>(std::min<int64_t>({host_threads_, kUploadThreads, runs}));
    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&](int w) {
      try {
        ScopedDevice on(dev.id);
        Stream stream;
        PinnedBuffer<uint8_t> staging[2] = {PinnedBuffer<uint8_t>(per_run * row), PinnedBuffer<uint8_t>(per_run * row)};
        Event filled[2];
        int64_t turn = 0;
        for (int64_t r = w; r < runs; r += workers, ++turn) {
          const int i = static_cast<int>(turn % 2);
          if (turn >= 2) FSGPU_CUDA_CHECK(cudaEventSynchronize(filled[i].get()));  // its last copy is done
          const int64_t first = r * per_run, count = std::min(per_run, rows - first);
          std::memcpy(staging[i].data(), host + static_cast<size_t>(first) * row, static_cast<size_t>(count) * row);
          FSGPU_CUDA_CHECK(cudaMemcpy2DAsync(device + static_cast<size_t>(first) * pitch, pitch, staging[i].data(), row,
                                             row, static_cast<size_t>(count), cudaMemcpyHostToDevice, stream.get()));
          FSGPU_CUDA_CHECK(cudaEventRecord(filled[i].get(), stream.get()));
        }
        FSGPU_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    };
    std::vector<std::thread> pool;
    for (int w = 1; w < workers; ++w) pool.emplace_back(work, w);
    work(0);
    for (std::thread& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    buf.loaded = &b;
  }

  // Bit planes of resident dense byte codes of at most kPlaneLevels levels, for the binary
  // tensor cores (sm_80 on), when there are enough features for them and they fit in `room` bytes.
  void make_planes(Device& dev, int64_t room) {
    if (x_.sparse || x_.wide) return;
    int major = 0, multiprocessors = 0;
    FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev.id));
    FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, dev.id));
    const int64_t n = dev.last - dev.first;
    if (major < 8 || plane_levels(dev.blocks[0].max_levels) == 0 || n < int64_t(kPlaneFeaturesPerSM) * multiprocessors)
      return;
    std::vector<int32_t> class_words(static_cast<size_t>(layout_.n_classes) + 1, 0);
    for (int32_t c = 0; c < layout_.n_classes; ++c) {
      const int64_t size = layout_.class_start[c + 1] - layout_.class_start[c];
      class_words[c + 1] = class_words[c] + static_cast<int32_t>((size + 255) / 256 * 8);
    }
    const int32_t x_levels = 16;  // a tile has 16 rows
    const int64_t bytes = n * class_words.back() * x_levels * 4;
    if (bytes > room) return;
    dev.class_words.upload(class_words.data(), class_words.size());
    dev.planes.class_start = dev.class_start.data();
    dev.planes.class_words = dev.class_words.data();
    dev.planes.n_classes = layout_.n_classes;
    dev.planes.words = class_words.back();
    dev.planes.levels = x_levels;
    DeviceBlock& buf = dev.buffers[0];
    buf.planes.resize(static_cast<size_t>(bytes / 4));
    launch_planes(static_cast<const uint8_t*>(buf.codes.data()), device_row_stride(x_), n, dev.planes, buf.planes.data(),
                  dev.streams[0]->get());
  }

  FeatureBlockView view(const Device& dev, const DeviceBlock& buf, const HostBlock& b) const {
    FeatureBlockView v;
    v.codes = buf.codes.data();
    v.wide = x_.wide;
    v.entry_start = x_.sparse ? buf.entry_start.data() : nullptr;
    v.entry_row = x_.sparse ? buf.entry_row.data() : nullptr;
    v.row_stride = x_.sparse ? 0 : device_row_stride(x_);
    v.first = b.first - dev.first;
    v.n_features = b.last - b.first;
    v.max_levels = b.max_levels;
    if (dev.planes.levels) v.planes = buf.planes.data() + (b.first - dev.first) * dev.planes.words * dev.planes.levels;
    return v;
  }

  // S's codes as bytes for the count loop: dense byte codes, levels(S) <= 256.
  bool narrow_codes(int32_t s_levels) const { return s_levels <= 256 && !x_.sparse && !x_.wide; }

  void launch_step(Device& dev, const Conditioning& s, const StepRule& rule) {
    if (dev.last == dev.first) return;
    ScopedDevice on(dev.id);
    cudaStream_t main = dev.streams[0]->get();
    const bool narrow_s = narrow_codes(s.levels);
    if (s.resident_feature >= 0) {  // condition_on left S's codes and n(s, y) on the device
      if (s.resident_feature != dev.s_feature) throw std::logic_error("the GPU engine no longer holds S's codes");
      // n(s) and the class terms through pinned memory: the upload does not wait for the host.
      const size_t counts_bytes = s.counts.size() * sizeof(uint32_t), terms_bytes = s.class_terms.size() * sizeof(int64_t);
      if (!dev.host_step_sent) dev.host_step_sent.reset(new Event());
      FSGPU_CUDA_CHECK(cudaEventSynchronize(dev.host_step_sent->get()));  // the previous step's copies have read it
      uint8_t* staged = dev.host_step.get(counts_bytes + terms_bytes);
      std::memcpy(staged, s.class_terms.data(), terms_bytes);  // int64 first: aligned
      std::memcpy(staged + terms_bytes, s.counts.data(), counts_bytes);
      dev.s_class_terms.reserve(s.class_terms.size());
      dev.s_counts.reserve(s.counts.size());
      FSGPU_CUDA_CHECK(cudaMemcpyAsync(dev.s_class_terms.data(), staged, terms_bytes, cudaMemcpyHostToDevice, main));
      FSGPU_CUDA_CHECK(
          cudaMemcpyAsync(dev.s_counts.data(), staged + terms_bytes, counts_bytes, cudaMemcpyHostToDevice, main));
      FSGPU_CUDA_CHECK(cudaEventRecord(dev.host_step_sent->get(), main));
    } else {
      dev.s_feature = -1;
      dev.s_codes.upload(s.codes.data(), s.codes.size(), main);
      dev.s_class_counts.upload(s.class_counts.data(), s.class_counts.size(), main);
      dev.s_counts.upload(s.counts.data(), s.counts.size(), main);
      dev.s_class_terms.upload(s.class_terms.data(), s.class_terms.size(), main);
      if (narrow_s) {
        dev.s_codes8.reserve(static_cast<size_t>(layout_.n_samples + 15) / 16 * 16);
        launch_narrow_codes(dev.s_codes.data(), layout_.n_samples, dev.s_codes8.data(), main);
      }
      FSGPU_CUDA_CHECK(cudaStreamSynchronize(main));  // the host vectors are pageable and step-local
    }

    StepView step;
    step.levels = dev.levels.data();
    step.base = dev.base.data();
    step.retired = dev.retired.data();
    step.state = dev.state.data();
    step.rule = rule;
    step.s_codes = dev.s_codes.data();
    step.s_codes8 = narrow_s ? dev.s_codes8.data() : nullptr;
    step.planes = dev.planes;
    if (dev.planes.levels && plane_levels(s.levels)) {
      PlaneLayout s_layout = dev.planes;
      s_layout.levels = plane_levels(s.levels);
      dev.s_planes.reserve(static_cast<size_t>(s_layout.words) * s_layout.levels);
      launch_planes(dev.s_codes.data(), s_layout, dev.s_planes.data(), main);
      step.s_planes = dev.s_planes.data();
      step.s_plane_levels = s_layout.levels;
    }
    step.s_class_counts = dev.s_class_counts.data();
    step.s_counts = dev.s_counts.data();
    step.s_class_terms = dev.s_class_terms.data();
    step.class_of = dev.class_of.data();
    step.s_levels = s.levels;
    step.class_start = dev.class_start.data();
    step.n_classes = layout_.n_classes;
    step.n_samples = layout_.n_samples;
    step.plogp = dev.plogp.data();

    const size_t n_buffers = dev.buffers.size();
    for (size_t i = 0; i < dev.blocks.size(); ++i) {
      const HostBlock& b = dev.blocks[i];
      DeviceBlock& buf = dev.buffers[i % n_buffers];
      cudaStream_t stream = dev.streams[i % n_buffers]->get();
      if (buf.loaded != &b) buf.load(x_, b, stream);  // streaming: the buffer's previous kernel ran on this stream
      const FeatureBlockView v = view(dev, buf, b);
      // The plan depends on the block and levels(S) only; the driver queries behind it stay off the step.
      // JIM's passes count Gini impurity (impurity_counts.cuh) instead of plogp sums.
      const bool impurity = impurity_pass(rule.method);
      auto& plans = impurity ? dev.impurity_plans : dev.plans;
      auto planned = plans.find({i, s.levels});
      if (planned == plans.end())
        planned = plans.emplace(std::make_pair(i, s.levels),
                                impurity ? plan_impurity(v, step, dev.id) : plan_counts(v, step, dev.id)).first;
      const CountLayout& plan = planned->second;
      if (!plan.shared_bytes && buf.scratch.size() < plan.words * plan.grid) {  // the kernels expect zeros
        buf.scratch.reserve(plan.words * plan.grid);
        FSGPU_CUDA_CHECK(cudaMemsetAsync(buf.scratch.data(), 0, buf.scratch.size() * sizeof(uint32_t), stream));
      }
      if (impurity) launch_impurity_pass(v, step, plan, buf.scratch.data(), stream);
      else launch_score_pass(v, step, plan, buf.scratch.data(), stream, n_buffers == 1 ? dev.side() : SideStream());
    }
    for (size_t i = 1; i < n_buffers; ++i) {  // what follows on the main stream waits for every stream
      FSGPU_CUDA_CHECK(cudaEventRecord(dev.done[i], dev.streams[i]->get()));
      FSGPU_CUDA_CHECK(cudaStreamWaitEvent(main, dev.done[i], 0));
    }
  }

  const CodeMatrix& x_;
  const ClassLayout& layout_;
  PlogpTable plogp_;
  int host_threads_;
  CudaCodeUpload* preloaded_;  // codes sent while they were encoded, or null
  std::vector<std::unique_ptr<PinnedRegion>> pins_;
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace

std::unique_ptr<CodeUpload> start_code_upload(int device, int32_t n_samples, int64_t n_features, int threads) {
  try {
    ScopedDevice on(device);
    size_t free_bytes = 0, total_bytes = 0;
    FSGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double bytes = double((static_cast<size_t>(n_samples) + 15) / 16 * 16) * double(n_features);
    if (bytes + double(int64_t(1) << 30) > double(free_bytes)) return nullptr;  // room for the engine's other data
    return std::make_unique<CudaCodeUpload>(device, n_samples, n_features, threads);
  } catch (const std::exception&) {
    cudaGetLastError();
    return nullptr;  // the upload after encoding still works, or the engine reports why not
  }
}

std::unique_ptr<SelectionEngine> make_gpu_engine(const CodeMatrix& x, const ClassLayout& layout,
                                                 const GpuOptions& options, Estimator estimator) {
  return std::make_unique<GpuEngine>(x, layout, options, estimator);
}

}  // namespace fsgpu
