// The JMI selection step alone, on the GPU engine, without R: synthetic data of the SVHN
// shape (an integer matrix's values, encoded as select_features() encodes them: the encoder's
// time on this host's threads) and of the news20 shape (sparse codes built in place), a
// k-feature selection timed step by step, the GPU's
// selection checked bitwise against the CPU engine's first steps, and a device-to-device copy
// timed in the same run for the ratio to the memory bandwidth actually reachable.
//
//   bench/jmi_step.sh (builds with nvcc, runs every shape), or by hand:
//   jmi_step SHAPE [k] [cpu_steps]      SHAPE: svhn16 | svhn64 | news20 | copy
//   jmi_step cpu SHAPE BASELINE         the CPU engine on one thread against the FEAST baseline
//                                       (SHAPE: svhn16 | svhn64 | news20 | breast)
//
// Prints one line per shape: key=value pairs (seconds, bytes a step, GB/s, agreement).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include "core/cpu_engine.h"
#include "core/gpu_backend.h"
#include "core/select.h"

using namespace fsgpu;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A cheap generator per thread (splitmix64): the data need to be reproducible, not good.
struct Mix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

template <class Body>
void threaded(int64_t n, Body body) {
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int64_t i = t; i < n; i += threads) body(i);
    });
  for (auto& th : pool) th.join();
}

std::vector<int32_t> labels(int32_t n, int32_t classes) {
  std::vector<int32_t> y(n);
  Mix r{42};
  for (auto& v : y) v = static_cast<int32_t>(r.next() % classes);
  return y;
}

// Dense integer values 0..levels-1 in sample order, as an R integer matrix holds them: the
// first 10 features follow the class (offset by class, 20% replaced at random), the others are
// uniform noise.
std::vector<int32_t> dense_values(const std::vector<int32_t>& y, int64_t p, int levels) {
  const int64_t n = static_cast<int64_t>(y.size());
  std::vector<int32_t> v(static_cast<size_t>(n * p));
  threaded(p, [&](int64_t f) {
    Mix r{static_cast<uint64_t>(f) * 7919 + 1};
    int32_t* col = v.data() + f * n;
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t u = r.next();
      const bool informative = f < 10 && (u >> 40) % 5 != 0;
      col[i] = static_cast<int32_t>(informative ? (y[i] * 3 + f + (u & 1)) % levels : u % levels);
    }
  });
  return v;
}

// The values encoded as select_features() encodes an integer matrix under the integer rule
// (its level limit for this many samples: 82), on every thread; `seconds` gets the time.
// With `upload`, the codes also go to the GPU while they are encoded, as select_features()
// sends big dense data (CodeUpload).
CodeMatrix encode_values(const std::vector<int32_t>& v, const ClassLayout& layout, int64_t p, double& seconds,
                         CodeUpload* upload = nullptr) {
  std::vector<ColumnSource> columns(p);
  for (int64_t f = 0; f < p; ++f) {
    columns[f].categorical = v.data() + f * layout.n_samples;
    columns[f].bin_above = 82;
  }
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  EncodeReport report;
  const Clock::time_point t0 = Clock::now();
  CodedHook on_coded;
  if (upload)
    on_coded = [upload](const uint8_t* codes, int64_t first, int64_t last, int worker) {
      upload->send(codes, first, last, worker);
    };
  CodeMatrix m = encode_dense(columns, layout, 64, threads, &report, on_coded);
  seconds = since(t0);
  return m;
}

// Sparse codes as the encoder leaves them for counts 1..20 at `density` in 64 bins: the zero
// bin is the base and is not stored; stored codes are 1..63.
CodeMatrix sparse_codes(const ClassLayout& layout, int64_t p, double density) {
  CodeMatrix m;
  m.sparse = true;
  m.n_samples = layout.n_samples;
  m.n_features = p;
  m.levels.assign(p, 64);
  m.base.assign(p, 0);
  std::vector<std::vector<int32_t>> rows(p);
  std::vector<std::vector<uint8_t>> codes(p);
  threaded(p, [&](int64_t f) {
    Mix r{static_cast<uint64_t>(f) * 104729 + 3};
    // Skewed lengths, as words in documents: a few features have many entries.
    const double scale = f % 100 == 0 ? 20.0 : 0.8;
    std::vector<uint8_t> seen(layout.n_samples, 0);
    const int64_t want = std::min<int64_t>(layout.n_samples / 2, static_cast<int64_t>(density * scale * layout.n_samples));
    for (int64_t e = 0; e < want; ++e) seen[r.next() % layout.n_samples] = 1;
    for (int32_t i = 0; i < layout.n_samples; ++i) {
      if (!seen[i]) continue;
      rows[f].push_back(i);
      const int32_t count = 1 + static_cast<int32_t>(r.next() % 20);
      const bool informative = f < 10 && r.next() % 5 != 0;
      codes[f].push_back(static_cast<uint8_t>(informative ? 1 + (layout.class_of[i] * 3 + f) % 63 : count * 3));
    }
  });
  m.entry_start.assign(p + 1, 0);
  for (int64_t f = 0; f < p; ++f) m.entry_start[f + 1] = m.entry_start[f] + static_cast<int64_t>(rows[f].size());
  for (int64_t f = 0; f < p; ++f) {
    m.entry_row.insert(m.entry_row.end(), rows[f].begin(), rows[f].end());
    m.codes8.insert(m.codes8.end(), codes[f].begin(), codes[f].end());
  }
  return m;
}

// Device-to-device copy: the bandwidth a kernel reading and writing HBM can reach.
double copy_bandwidth() {
  const size_t bytes = size_t(2) << 30;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) return 0;
  cudaMemset(a, 1, bytes);
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  const int reps = 10;
  for (int i = 0; i < reps; ++i) cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * bytes * reps / (ms / 1e3) / 1e9;  // read + write
}

// The engine's calls timed from the host, for where a step's time goes: condition_on (S's
// tables built and read back), score_pass (launches), best_candidate (waits for the pass, then
// the argmax and its readback).
class TimedEngine : public SelectionEngine {
 public:
  explicit TimedEngine(SelectionEngine& e) : e_(e) {}
  double condition = 0, pass = 0, best = 0, retire_s = 0;
  template <class F>
  static auto timed(double& into, F f) {
    const Clock::time_point t = Clock::now();
    auto r = f();
    into += since(t);
    return r;
  }
  Conditioning condition_on(int64_t f) override { return timed(condition, [&] { return e_.condition_on(f); }); }
  void score_pass(const Conditioning& s, const StepRule& r) override {
    timed(pass, [&] { e_.score_pass(s, r); return 0; });
  }
  void retire(int64_t f) override {
    timed(retire_s, [&] { e_.retire(f); return 0; });
  }
  Candidate best_candidate() override { return timed(best, [&] { return e_.best_candidate(); }); }
  std::vector<Wide> keys() override { return e_.keys(); }
  bool reads_host_codes() const override { return e_.reads_host_codes(); }
  const CodeMatrix& codes() const override { return e_.codes(); }
  const ClassLayout& layout() const override { return e_.layout(); }
  const PlogpTable& plogp() const override { return e_.plogp(); }

 private:
  SelectionEngine& e_;
};

SelectionOptions jmi(int64_t k) {
  SelectionOptions o;
  o.method = Method::jmi;
  o.k = k;
  return o;
}

void run(const std::string& shape, int64_t k, int64_t cpu_steps, double copy_gbps) {
  const bool sparse = shape == "news20";
  const int32_t n = sparse ? 15935 : 531131;
  const int64_t p = sparse ? 62061 : 3072;
  const int32_t classes = sparse ? 20 : 10;
  const std::vector<int32_t> y = labels(n, classes);
  const ClassLayout layout = ClassLayout::from_labels(y.data(), n, classes);
  Clock::time_point t0 = Clock::now();
  double encode = 0;
  const std::vector<int32_t> values = sparse ? std::vector<int32_t>() : dense_values(y, p, shape == "svhn16" ? 16 : 64);
  auto owner = std::make_unique<CodeMatrix>(sparse ? sparse_codes(layout, p, 0.0023)
                                                   : encode_values(values, layout, p, encode));
  const CodeMatrix& codes = *owner;
  const double made = since(t0);

  GpuOptions options;
  options.devices = {0};
  options.host_threads = std::max(1u, std::thread::hardware_concurrency());
  // A part of prepare: the table of n log n terms, on one thread (as before) and on all.
  t0 = Clock::now();
  const PlogpTable one_thread(n);
  const double plogp1 = since(t0);
  t0 = Clock::now();
  const PlogpTable all_threads(n, Estimator::empirical, options.host_threads);
  const double plogp_all = since(t0);
  if (one_thread.size() != all_threads.size() ||
      !std::equal(one_thread.data(), one_thread.data() + one_thread.size(), all_threads.data()))
    std::printf("plogp tables differ between 1 and %d threads\n", options.host_threads);
  t0 = Clock::now();
  auto gpu = make_gpu_engine(codes, layout, options);
  const double prepare = since(t0);
  double relevance = 0;
  t0 = Clock::now();
  Clock::time_point steps_start = t0;
  TimedEngine timed(*gpu);
  const Selection sel = select_features(timed, jmi(k), [&](int64_t step) {
    if (step == 1) {
      relevance = since(t0);
      steps_start = Clock::now();
    }
  });
  const double steps = since(steps_start);
  t0 = Clock::now();
  gpu.reset();  // device memory and staging freed: part of the "R side" of an R run
  const double release = since(t0);
  const int64_t taken = static_cast<int64_t>(sel.features.size());
  const double per_step = taken > 1 ? steps / (taken - 1) : 0;
  const double bytes = sparse ? codes.n_entries() * 5.0 : double(n) * p;  // codes read a step (sparse: + rows)
  const double gbps = per_step > 0 ? bytes / per_step / 1e9 : 0;

  // The CPU engine's first steps: features and scores must equal the GPU's bitwise.
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  CpuEngine cpu(codes, layout, threads);
  t0 = Clock::now();
  const Selection ref = select_features(cpu, jmi(cpu_steps), nullptr);
  const double cpu_seconds = since(t0);
  bool agrees = ref.features.size() <= sel.features.size();
  for (size_t i = 0; agrees && i < ref.features.size(); ++i)
    agrees = ref.features[i] == sel.features[i] && ref.scores[i] == sel.scores[i];

  const int64_t entries = codes.n_entries();
  t0 = Clock::now();
  owner.reset();  // the host's codes freed, as the glue does on its way back to R
  const double free_codes = since(t0);

  // A part of prepare on the SVHN shapes: fresh device allocations of the codes' and the bit
  // planes' sizes (1 and 2 bytes a sample and feature).
  double malloc_codes = 0, malloc_planes = 0;
  if (!sparse) {
    void* a = nullptr;
    t0 = Clock::now();
    if (cudaMalloc(&a, size_t(n) * p) == cudaSuccess) cudaFree(a);
    malloc_codes = since(t0);
    t0 = Clock::now();
    if (cudaMalloc(&a, size_t(2) * n * p) == cudaSuccess) cudaFree(a);
    malloc_planes = since(t0);
  }

  // Dense data again as select_features() takes big dense data to one GPU: uploaded while they
  // are encoded, the engine adopting them; its first steps must be the same.
  double encode_overlap = 0, prepare_overlap = 0;
  bool overlap_agrees = true;
  if (!sparse) {
    std::unique_ptr<CodeUpload> upload = start_code_upload(0, n, p, threads);
    const CodeMatrix again = encode_values(values, layout, p, encode_overlap, upload.get());
    options.preloaded = upload.get();
    t0 = Clock::now();
    auto adopted = make_gpu_engine(again, layout, options);
    const bool sent = upload != nullptr;
    upload.reset();
    prepare_overlap = since(t0);
    const Selection first = select_features(*adopted, jmi(cpu_steps), nullptr);
    overlap_agrees = sent && first.features == ref.features && first.scores == ref.scores;
  }

  std::printf("shape=%s n=%d p=%lld classes=%d entries=%lld made_s=%.3f encode_s=%.4f prepare_s=%.4f relevance_s=%.4f "
              "plogp1_s=%.4f plogp_s=%.4f malloc_codes_s=%.4f malloc_planes_s=%.4f condition_ms=%.4f pass_ms=%.4f best_ms=%.4f steps=%lld steps_s=%.4f release_s=%.4f free_s=%.4f encode_overlap_s=%.4f prepare_overlap_s=%.4f overlap_agrees=%s per_step_ms=%.4f bytes_per_step=%.4g GBps=%.1f copy_GBps=%.1f "
              "of_copy=%.3f of_3350=%.3f cpu%d_steps=%lld cpu_s=%.3f agrees=%s\n",
              shape.c_str(), n, (long long)p, classes, (long long)entries, made, encode, prepare, relevance,
              plogp1, plogp_all, malloc_codes, malloc_planes, timed.condition * 1e3 / std::max<int64_t>(1, taken - 1),
              timed.pass * 1e3 / std::max<int64_t>(1, taken), timed.best * 1e3 / std::max<int64_t>(1, taken), (long long)taken, steps, release, free_codes, encode_overlap, prepare_overlap, overlap_agrees ? "yes" : "NO", per_step * 1e3, bytes, gbps, copy_gbps, copy_gbps > 0 ? gbps / copy_gbps : 0,
              gbps / 3350, threads, (long long)cpu_steps, cpu_seconds, agrees ? "yes" : "NO");
  std::fflush(stdout);
}

// The CPU engine on one thread against the FEAST baseline (bench/baseline/feast_jmi), per step
// after the first, on the same codes and the same host: k = 3. SVHN shapes at a tenth of their
// samples (the cost of a step is linear in them), news20 and BreastCancer (97 x 24,481, 64
// levels) in full.
void cpu_vs_baseline(const std::string& shape, const std::string& baseline) {
  const bool sparse = shape == "news20", breast = shape == "breast";
  const int32_t n = sparse ? 15935 : breast ? 97 : 53114;
  const int64_t p = sparse ? 62061 : breast ? 24481 : 3072;
  const int32_t classes = sparse ? 20 : breast ? 2 : 10;
  const std::vector<int32_t> y = labels(n, classes);
  const ClassLayout layout = ClassLayout::from_labels(y.data(), n, classes);
  double encode = 0;
  const CodeMatrix codes = sparse ? sparse_codes(layout, p, 0.0023)
                                  : encode_values(dense_values(y, p, shape == "svhn16" ? 16 : 64), layout, p, encode);
  const int64_t k = 3;
  CpuEngine cpu(codes, layout, 1);
  Clock::time_point t0 = Clock::now(), after_first = t0;
  const Selection sel = select_features(cpu, jmi(k), [&](int64_t step) {
    if (step == 1) after_first = Clock::now();
  });
  const double cpu_step = since(after_first) / double(sel.features.size() - 1);
  // The baseline reads dense codes feature after feature (class-sorted order: counts do not
  // depend on the order) and the labels in the same order.
  const std::string codes_path = "/tmp/jmi_step_codes.bin", labels_path = "/tmp/jmi_step_labels.bin";
  {
    FILE* out = std::fopen(codes_path.c_str(), "wb");
    std::vector<uint8_t> column(n);
    for (int64_t f = 0; f < p; ++f) {
      std::fill(column.begin(), column.end(), static_cast<uint8_t>(codes.sparse ? codes.base[f] : 0));
      for (int64_t e = codes.entries_begin(f); e < codes.entries_end(f); ++e)
        column[codes.row(f, e)] = static_cast<uint8_t>(codes.code(e));
      std::fwrite(column.data(), 1, column.size(), out);
    }
    std::fclose(out);
    out = std::fopen(labels_path.c_str(), "wb");
    for (int32_t i = 0; i < n; ++i) std::fputc(layout.class_of[i], out);
    std::fclose(out);
  }
  const std::string command = baseline + " " + codes_path + " " + std::to_string(n) + " " + std::to_string(p) + " " +
                              labels_path + " " + std::to_string(k) + " 1e-10";
  FILE* pipe = popen(command.c_str(), "r");
  char line[1 << 16] = {};
  const bool got = pipe && std::fgets(line, sizeof line, pipe);
  if (pipe) pclose(pipe);
  double seconds = 0, first = 0;
  const char* at = got ? std::strstr(line, " seconds=") : nullptr;
  const char* at_first = got ? std::strstr(line, "first_seconds=") : nullptr;
  if (at && at_first) {
    seconds = std::atof(at + 9);
    first = std::atof(at_first + 14);
  }
  const double baseline_step = (seconds - first) / double(k - 1);
  std::printf("cpu shape=%s n=%d p=%lld cpu1_step_s=%.5f baseline_step_s=%.5f cpu1_vs_baseline=%.2fx%s\n", shape.c_str(), n,
              (long long)p, cpu_step, baseline_step, cpu_step > 0 ? baseline_step / cpu_step : 0,
              at ? "" : " (baseline gave no timings)");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "cpu") {  // jmi_step cpu SHAPE BASELINE: no GPU needed
    cpu_vs_baseline(argv[2], argv[3]);
    return 0;
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: jmi_step SHAPE [k] [cpu_steps]   SHAPE: svhn16 | svhn64 | news20 | copy\n");
    return 2;
  }
  const GpuStatus status = gpu_status();
  if (status.devices.empty()) {
    std::printf("no GPU: %s\n", status.problem.c_str());
    return 1;
  }
  const std::string shape = argv[1];
  const int64_t k = argc > 2 ? std::atoll(argv[2]) : 200;
  const int64_t cpu_steps = argc > 3 ? std::atoll(argv[3]) : 3;
  const double copy_gbps = copy_bandwidth();
  if (shape == "copy") {
    std::printf("device=%s copy_GBps=%.1f\n", status.devices[0].name.c_str(), copy_gbps);
    return 0;
  }
  std::printf("device=%s\n", status.devices[0].name.c_str());
  try {
    run(shape, k, cpu_steps, copy_gbps);
  } catch (std::exception& e) {
    std::printf("shape=%s failed: %s\n", shape.c_str(), e.what());
    return 1;
  }
  return 0;
}
