// kNN without R: the host blocks kept from call to call; the CPU engine against every pair's
// knn_key() sorted, thread counts, ties and duplicates, k = n - 1, queries, and (on a GPU) the
// GPU engine against the CPU bitwise, resident, streamed and kept on the device (gpu_knn_keep),
// on one device and on two, from pageable and page-locked host memory; the range search the same
// way. Distances against R's are checked in tests/testthat/test-knn-graph.R.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "core/knn.h"
#include "core/knn_heap.h"
#include "core/knn_metric.h"

using namespace fsgpu;

namespace {

// n points of dim values, column-major, in clusters, with exact duplicates and tied distances.
std::vector<double> make_points(uint32_t seed, int64_t n, int32_t dim) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> centres(8 * dim);
  for (double& c : centres) c = 3 * normal(rng);
  std::vector<double> x(n * dim);
  for (int64_t i = 0; i < n; ++i)
    for (int32_t t = 0; t < dim; ++t) x[t * n + i] = centres[(i % 8) * dim + t] + normal(rng) + 5.0;
  for (int64_t i = 0; i + 7 < n; i += 7)  // duplicates
    for (int32_t t = 0; t < dim; ++t) x[t * n + i + 1] = x[t * n + i];
  for (int32_t t = 0; t < dim && n > 3; ++t) x[t * n + n - 1] = t % 2 ? 1.0 : 2.0;  // a row of two values
  for (int32_t t = 0; t < dim && n > 3; ++t) x[t * n + n - 2] = 4.0;                // constant
  return x;
}

KnnResult brute_force(const KnnPoints& ref, const KnnPoints* queries, int32_t k) {
  const KnnPoints& q = queries ? *queries : ref;
  KnnResult r;
  r.n_queries = q.n;
  r.k = k;
  for (int64_t i = 0; i < q.n; ++i) {
    std::vector<std::pair<double, int32_t>> all;
    for (int64_t j = 0; j < ref.n; ++j)
      if (queries || j != i)
        all.emplace_back(knn_key(ref.metric, q.rows.data() + i * q.stride, ref.rows.data() + j * ref.stride,
                                 ref.stride, q.norm(i), ref.norm(j)), int32_t(j));
    std::sort(all.begin(), all.end());
    for (int32_t c = 0; c < k; ++c) {
      r.index.push_back(all[c].second);
      r.distance.push_back(knn_key_distance(ref.metric, all[c].first));
    }
  }
  return r;
}

// Every reference point within thresholds[i] of query i by knn_key(), in index order.
KnnRangeResult brute_force_range(const KnnPoints& ref, const KnnPoints* queries, const std::vector<double>& thresholds) {
  const KnnPoints& q = queries ? *queries : ref;
  std::vector<std::vector<std::pair<int32_t, double>>> found(q.n);
  for (int64_t i = 0; i < q.n; ++i)
    for (int64_t j = 0; j < ref.n; ++j) {
      const double key = knn_key(ref.metric, q.rows.data() + i * q.stride, ref.rows.data() + j * ref.stride, ref.stride,
                                 q.norm(i), ref.norm(j));
      if (key <= knn_threshold_key(ref.metric, thresholds[i]))
        found[i].emplace_back(int32_t(j), knn_key_distance(ref.metric, key));
    }
  KnnRangeResult r;
  r.assemble(found);
  return r;
}

bool same_range(const KnnRangeResult& a, const KnnRangeResult& b) {
  return a.n_queries == b.n_queries && a.offsets == b.offsets && a.index == b.index &&
         a.distance.size() == b.distance.size() &&
         !std::memcmp(a.distance.data(), b.distance.data(), a.distance.size() * sizeof(double));
}

bool same(const KnnResult& a, const KnnResult& b) {
  return a.index == b.index && a.distance.size() == b.distance.size() &&
         !std::memcmp(a.distance.data(), b.distance.data(), a.distance.size() * sizeof(double));
}

// A stand-in for the GPU backend's page-locking: counts the blocks it holds locked.
int fake_locked = 0;
bool fake_lock(void*, size_t) { return ++fake_locked > 0; }
void fake_unlock(void*) { --fake_locked; }
const PageLocking kFakeLocking{fake_lock, fake_unlock};

// The host blocks kept from call to call (host_blocks.h): a block given back serves the next
// request of its size (up to twice the size asked for), those kept stay within kKeptHostBytes,
// the longest idle freed first, locking happens once a block can be kept and undoes itself
// when it is freed; and points prepared into a reused block (holding another search's rows)
// equal points prepared into a fresh one, and search the same.
void host_block_tests() {
  free_kept_host_blocks();
  const size_t mb = size_t(1) << 20;
  void* a = take_host_block(3 * mb);  // 4 MB: whole 2 MB pages
  give_back_host_block(a);
  EXPECT(kept_host_blocks().blocks == 1 && kept_host_blocks().bytes == 4 * mb, "host blocks: one of 4 MB kept");
  EXPECT(take_host_block(4 * mb) == a, "host blocks: the kept block serves a request of its size");
  void* b = take_host_block(mb);
  EXPECT(b != a && kept_host_blocks().blocks == 0, "host blocks: none kept while in use");
  give_back_host_block(b);
  give_back_host_block(a);
  void* c = take_host_block(10 * mb);
  give_back_host_block(c);
  EXPECT(take_host_block(4 * mb) == a, "host blocks: the smallest that fits");
  EXPECT(take_host_block(2 * mb) == b, "host blocks: the smallest that fits, again");
  void* d = take_host_block(2 * mb);
  EXPECT(d != c, "host blocks: not one more than twice the size");
  give_back_host_block(d);
  give_back_host_block(a);
  give_back_host_block(b);
  EXPECT(take_host_block(5 * mb) == c, "host blocks: one up to twice the size");
  give_back_host_block(c);
  void* big = take_host_block(kKeptHostBytes + mb);
  give_back_host_block(big);
  EXPECT(kept_host_blocks().bytes == 18 * mb, "host blocks: one bigger than kKeptHostBytes is not kept");
  // Three of 40% of kKeptHostBytes: the first given back goes when the third comes.
  free_kept_host_blocks();
  void* third[3];
  for (void*& p : third) p = take_host_block(kKeptHostBytes / 5 * 2);
  for (void* p : third) give_back_host_block(p);
  const KeptHostBlocks k3 = kept_host_blocks();
  EXPECT(k3.bytes <= kKeptHostBytes && k3.blocks == 2, "host blocks: kept %zu bytes in %d blocks", k3.bytes, k3.blocks);
  void* again = take_host_block(kKeptHostBytes / 5 * 2);
  EXPECT(again == third[1] || again == third[2], "host blocks: the longest idle was freed");
  give_back_host_block(again);
  free_kept_host_blocks();
  EXPECT(kept_host_blocks().blocks == 0, "host blocks: all freed");

  set_page_locking(&kFakeLocking);
  void* locked = take_host_block(2 * mb);
  EXPECT(fake_locked == 1, "host blocks: locked when taken");
  give_back_host_block(locked);
  EXPECT(take_host_block(2 * mb) == locked && fake_locked == 1, "host blocks: a kept block is locked once");
  void* unlocked = take_host_block(kKeptHostBytes + mb);
  EXPECT(fake_locked == 1, "host blocks: one that cannot be kept is not locked");
  give_back_host_block(unlocked);
  give_back_host_block(locked);
  set_page_locking(nullptr);
  EXPECT(kept_host_blocks().locked == 1, "host blocks: stays locked while kept");
  free_kept_host_blocks();
  EXPECT(fake_locked == 0, "host blocks: unlocked when freed");

  // 4,000 points of 70 values: 2.3 MB of rows, in a block that the next preparation reuses.
  const int64_t n = 4000;
  const int32_t dim = 70;
  const std::vector<double> x = make_points(80, n, dim), other = make_points(81, n, dim);
  for (KnnMetric m : {KnnMetric::pearson, KnnMetric::spearman, KnnMetric::euclidean}) {
    KnnResult first;
    std::vector<double> fresh_rows;
    const double* fresh_block = nullptr;
    {
      const KnnPoints fresh = prepare_points(x.data(), n, dim, m, 2);
      fresh_rows.assign(fresh.rows.begin(), fresh.rows.end());
      fresh_block = fresh.rows.data();
      first = cpu_knn(fresh, nullptr, 15, 2, nullptr);
    }
    { const KnnPoints overwritten = prepare_points(other.data(), n, dim, m, 2); }  // the block holds other rows
    const KnnPoints reused = prepare_points(x.data(), n, dim, m, 2);
    EXPECT(reused.rows.data() == fresh_block, "host blocks %d: the rows' block reused", int(m));
    EXPECT(reused.rows.size() == fresh_rows.size() &&
               !std::memcmp(reused.rows.data(), fresh_rows.data(), fresh_rows.size() * sizeof(double)),
           "host blocks %d: rows prepared into a reused block", int(m));
    EXPECT(same(first, cpu_knn(reused, nullptr, 15, 2, nullptr)), "host blocks %d: search on a reused block", int(m));
  }
}

}  // namespace

void knn_tests(const GpuStatus& gpu) {
  host_block_tests();
  const KnnMetric metrics[] = {KnnMetric::pearson, KnnMetric::spearman, KnnMetric::cosine, KnnMetric::euclidean,
                               KnnMetric::manhattan};
  const char* names[] = {"pearson", "spearman", "cosine", "euclidean", "manhattan"};
  struct Case { uint32_t seed; int64_t n; int32_t dim; int32_t k; };
  const Case cases[] = {{91, 40, 5, 39}, {92, 300, 17, 10}, {93, 700, 33, 64}, {94, 1500, 8, 5}};
  for (const Case& c : cases) {
    const std::vector<double> x = make_points(c.seed, c.n, c.dim);
    const std::vector<double> qx = make_points(c.seed + 100, 37, c.dim);
    for (KnnMetric m : metrics) {
      const char* name = names[int(m)];
      const KnnPoints p = prepare_points(x.data(), c.n, c.dim, m, 2);
      const KnnPoints qp = prepare_points(qx.data(), 37, c.dim, m, 2);
      const KnnResult ref = brute_force(p, nullptr, c.k);
      const KnnResult cpu = cpu_knn(p, nullptr, c.k, 1, nullptr);
      EXPECT(same(ref, cpu), "case %u %s: cpu against brute force", c.seed, name);
      EXPECT(same(cpu, cpu_knn(p, nullptr, c.k, 3, nullptr)), "case %u %s: threads", c.seed, name);
      const KnnResult qref = brute_force(p, &qp, c.k);
      EXPECT(same(qref, cpu_knn(p, &qp, c.k, 2, nullptr)), "case %u %s: queries", c.seed, name);
      // Duplicates are each other's nearest neighbours (at distance 0, or its rounding: 1 - sum z^2).
      EXPECT(cpu.index[1 * c.k] == 0 && cpu.index[0] == 1 && cpu.distance[0] == cpu.distance[1 * c.k] &&
             cpu.distance[0] < 1e-15, "case %u %s: duplicates", c.seed, name);
      if (gpu.devices.empty()) continue;
      for (int64_t limit : {int64_t(0), int64_t(1) << 18}) {  // resident; streamed in blocks
        GpuOptions options;
        options.devices.push_back(0);
        options.memory_limit = limit;
        options.host_threads = 2;
        GpuKnnPhases phases;
        EXPECT(same(cpu, gpu_knn(p, nullptr, c.k, options, nullptr, &phases)), "case %u %s: gpu (limit %lld)", c.seed,
               name, (long long)limit);
        EXPECT(same(qref, gpu_knn(p, &qp, c.k, options, nullptr, nullptr)), "case %u %s: gpu queries (limit %lld)",
               c.seed, name, (long long)limit);
      }
      {  // the reference points kept on the device, searched twice
        GpuOptions options;
        options.devices.push_back(0);
        const std::shared_ptr<GpuKnnKept> kept = gpu_knn_keep(p, options);
        EXPECT(same(cpu, gpu_knn(p, nullptr, c.k, options, nullptr, nullptr, kept.get())), "case %u %s: gpu kept",
               c.seed, name);
        EXPECT(same(qref, gpu_knn(p, &qp, c.k, options, nullptr, nullptr, kept.get())), "case %u %s: gpu kept queries",
               c.seed, name);
      }
      if (gpu.devices.size() > 1) {
        GpuOptions options;
        options.devices = std::vector<int>(2);
        options.devices[1] = 1;
        EXPECT(same(cpu, gpu_knn(p, nullptr, c.k, options, nullptr, nullptr)), "case %u %s: two gpus", c.seed, name);
      }
    }
  }
  // Many exact ties (a lattice): the exact fallback of the GPU must agree too.
  {
    const int64_t n = 2000;
    std::vector<double> x(n * 4);
    for (int64_t i = 0; i < n; ++i)
      for (int32_t t = 0; t < 4; ++t) x[t * n + i] = double((i >> (2 * t)) % 4);
    for (KnnMetric m : {KnnMetric::euclidean, KnnMetric::manhattan, KnnMetric::cosine}) {
      const KnnPoints p = prepare_points(x.data(), n, 4, m, 2);
      const KnnResult cpu = cpu_knn(p, nullptr, 12, 2, nullptr);
      EXPECT(same(brute_force(p, nullptr, 12), cpu), "lattice %s: cpu", names[int(m)]);
      if (gpu.devices.empty()) continue;
      GpuOptions options;
      options.devices.push_back(0);
      GpuKnnPhases phases;
      EXPECT(same(cpu, gpu_knn(p, nullptr, 12, options, nullptr, &phases)), "lattice %s: gpu", names[int(m)]);
      EXPECT(phases.retried_rows + phases.exact_rows > 0, "lattice %s: ties sent rows to another search", names[int(m)]);
    }
  }
  // The GPU pass's candidate heap (8-ary, knn_heap.h) against a sort: after any sequence of
  // offers (scores with many ties, indices in any order) it holds the best `capacity` by
  // (score, index), with the worst of them on top, and the caller's copy of the top is heap[0].
  {
    std::mt19937 rng(78);
    int heap_failures = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      const int32_t capacity = trial % 7 == 0 ? 1 : 1 + int32_t(rng() % 200);
      const int32_t offers = int32_t(rng() % 700);
      const int32_t levels = trial % 3 == 0 ? 3 : 1000;  // few distinct scores: ties everywhere
      std::vector<KnnCandidate> heap(capacity), offered;
      std::vector<int32_t> order(offers);
      for (int32_t j = 0; j < offers; ++j) order[j] = j;
      std::shuffle(order.begin(), order.end(), rng);
      int32_t size = 0;
      KnnCandidate top{};
      bool top_kept = true;  // the caller's copy of the top always equals heap[0]
      for (int32_t j : order) {
        const KnnCandidate c{float(rng() % levels) / 7.0f, j};
        offered.push_back(c);
        candidate_heap_offer(heap.data(), size, capacity, c, top);
        top_kept = top_kept && top.score == heap[0].score && top.index == heap[0].index;
      }
      auto by_order = [](const KnnCandidate& a, const KnnCandidate& b) {
        return candidate_before(a.score, a.index, b.score, b.index);
      };
      std::sort(offered.begin(), offered.end(), by_order);
      offered.resize(std::min<size_t>(offered.size(), capacity));
      std::vector<KnnCandidate> kept(heap.begin(), heap.begin() + size);
      const bool top_is_worst = size == 0 || (kept[0].score == offered.back().score && kept[0].index == offered.back().index);
      std::sort(kept.begin(), kept.end(), by_order);
      bool equal = kept.size() == offered.size() && top_is_worst && top_kept;
      for (size_t e = 0; equal && e < kept.size(); ++e)
        equal = kept[e].score == offered[e].score && kept[e].index == offered[e].index;
      heap_failures += !equal;
    }
    EXPECT(heap_failures == 0, "candidate heap: %d of 3000 trials differ from a sort", heap_failures);
  }
  // Adversarial data for the tensor-core pass (half-precision scores, whose error bound is wide):
  // near-duplicate rows (scores tied in half precision, apart in double), rows scaled by huge and
  // tiny factors, many constant rows (every distance 1, ties by index), groups of exact
  // duplicates, dimensions past what shared memory holds (the pass whose query rows stream),
  // dimensions at the edges of the pass's 64-dimension chunks, and n and k at the edges of the
  // 128-row tiles and of the candidate heaps (k + 96). The CPU must
  // equal brute force, and the GPU the CPU bit for bit.
  {
    struct Adversarial { const char* name; int64_t n; int32_t dim; int32_t k; int kind; };
    const Adversarial adversarial[] = {
        {"near duplicates", 300, 40, 20, 0}, {"huge and tiny norms", 257, 29, 20, 1},
        {"constant rows", 300, 16, 150, 2},  {"duplicate groups", 520, 12, 33, 3},
        {"tile edge 129", 129, 64, 32, 0},    {"tile edge 256", 256, 33, 128, 3},
        {"many dimensions", 300, 700, 20, 0}, {"k at the heap edge", 400, 24, 96, 1},
        {"chunk edge 65", 383, 65, 20, 0},    {"chunk edge 128", 385, 128, 40, 3}};
    std::mt19937 rng(77);
    std::normal_distribution<double> normal(0, 1);
    for (const Adversarial& a : adversarial) {
      const int64_t n = a.n;
      std::vector<double> x(n * a.dim);
      for (double& v : x) v = normal(rng);
      for (int64_t i = 0; i < n; ++i)
        for (int32_t t = 0; t < a.dim; ++t) {
          double& v = x[t * n + i];
          if (a.kind == 0 && i % 3 != 0) v = x[t * n + i - i % 3] * (1 + 1e-9 * (i % 3)) + 1e-12 * t;  // near duplicates
          if (a.kind == 1) v *= std::pow(10.0, double(i % 61 - 30));                                   // 1e-30 .. 1e30
          if (a.kind == 2 && i % 3 != 0) v = double(i % 5);                                            // constant rows
          if (a.kind == 3) v = x[t * n + i % 13];  // 13 groups of copies
        }
      for (KnnMetric m : metrics) {
        if (a.kind == 1 && !is_correlation(m)) continue;  // 1e30^2 times the dimensions: past single precision
        const char* name = names[int(m)];
        const KnnPoints p = prepare_points(x.data(), n, a.dim, m, 2);
        const KnnResult cpu = cpu_knn(p, nullptr, a.k, 2, nullptr);
        EXPECT(same(brute_force(p, nullptr, a.k), cpu), "%s %s: cpu against brute force", a.name, name);
        if (gpu.devices.empty()) continue;
        GpuOptions options;
        options.devices.push_back(0);
        options.host_threads = 2;
        GpuKnnPhases phases;
        EXPECT(same(cpu, gpu_knn(p, nullptr, a.k, options, nullptr, &phases)), "%s %s: gpu", a.name, name);
        const KnnPoints qp = prepare_points(x.data(), n, a.dim, m, 2);  // the points as queries: themselves included
        EXPECT(same(brute_force(p, &qp, a.k), gpu_knn(p, &qp, a.k, options, nullptr, nullptr)), "%s %s: gpu queries",
               a.name, name);
      }
    }
  }
  // Enough points that the GPU stages its uploads through page-locked buffers (26 MB of double
  // rows: more 8 MB chunks than the ring has slots, the last one partial): rows spread over the
  // points against brute force (the CPU engine on all of them would take too long here). Then
  // the same with the kept host blocks page-locked, as knn_graph() asks before a GPU search: the
  // rows go up and the neighbour lists come down directly; and a search repeated on the device
  // buffers that the last one left gives the same.
  if (!gpu.devices.empty()) {
    const int64_t n = 40000;
    const int32_t dim = 81, k = 10;
    const std::vector<double> x = make_points(79, n, dim);
    GpuOptions options;
    options.devices.push_back(0);
    options.host_threads = 2;
    auto wrong_of_sample = [&](const KnnPoints& p, const KnnResult& r) {
      int wrong = 0;
      for (int64_t i = 0; i < n; i += 997) {
        std::vector<std::pair<double, int32_t>> all;
        for (int64_t j = 0; j < n; ++j)
          if (j != i)
            all.emplace_back(knn_key(p.metric, p.rows.data() + i * p.stride, p.rows.data() + j * p.stride, p.stride,
                                     p.norm(i), p.norm(j)), int32_t(j));
        std::partial_sort(all.begin(), all.begin() + k, all.end());
        for (int32_t c = 0; c < k; ++c)
          wrong += r.index[i * k + c] != all[c].second || r.distance[i * k + c] != knn_key_distance(p.metric, all[c].first);
      }
      return wrong;
    };
    for (bool locked : {false, true}) {
      if (locked) gpu_lock_host_blocks();
      for (KnnMetric m : {KnnMetric::pearson, KnnMetric::euclidean}) {
        const KnnPoints p = prepare_points(x.data(), n, dim, m, 2);
        const KnnResult gpu_result = gpu_knn(p, nullptr, k, options, nullptr, nullptr);
        const int wrong = wrong_of_sample(p, gpu_result);
        EXPECT(wrong == 0, "40,000 points %s%s: %d neighbours of sampled rows differ from brute force", names[int(m)],
               locked ? " (page-locked)" : "", wrong);
        if (locked)
          EXPECT(same(gpu_result, gpu_knn(p, nullptr, k, options, nullptr, nullptr)),
                 "40,000 points %s: again, on the kept device buffers", names[int(m)]);
      }
    }
    EXPECT(kept_host_blocks().locked > 0, "40,000 points: the kept host blocks page-locked");
  }
  // The tensor-core pass under smaller GPUs' shared memory limits for a block: A100's 163 KB
  // takes mma.sync's 32-dimension chunks at 295 dimensions (also on Hopper, where 227 KB takes
  // wgmma), sm_86/89's 99 KB no tensor pass past 64 dimensions (the single-precision pass
  // instead). Neighbours and distances as the CPU's.
  if (!gpu.devices.empty()) {
    const int64_t n = 1500;
    for (int32_t dim : {40, 63, 130, 295}) {
      const std::vector<double> x = make_points(90 + dim, n, dim);
      for (KnnMetric m : {KnnMetric::pearson, KnnMetric::cosine}) {
        const KnnPoints p = prepare_points(x.data(), n, dim, m, 2);
        const KnnResult cpu = cpu_knn(p, nullptr, 15, 2, nullptr);
        for (int cap : {101376, 166912, 232448}) {
          GpuOptions options;
          options.devices.push_back(0);
          options.shared_memory_cap = cap;
          EXPECT(same(cpu, gpu_knn(p, nullptr, 15, options, nullptr, nullptr)),
                 "%d dimensions %s, shared memory of a block capped at %d bytes: gpu", dim, names[int(m)], cap);
        }
      }
    }
  }
  // Range search: CPU against every pair's knn_key(), thread counts, queries, a threshold per
  // query (some of them exactly a pair's distance), and on a GPU the GPU against the CPU bitwise.
  for (const Case& c : cases) {
    const std::vector<double> x = make_points(c.seed, c.n, c.dim);
    const std::vector<double> qx = make_points(c.seed + 100, 37, c.dim);
    for (KnnMetric m : metrics) {
      const char* name = names[int(m)];
      const KnnPoints p = prepare_points(x.data(), c.n, c.dim, m, 2);
      const KnnPoints qp = prepare_points(qx.data(), 37, c.dim, m, 2);
      const KnnResult nn = cpu_knn(p, nullptr, std::min<int32_t>(c.k, 10), 2, nullptr);
      std::vector<double> thresholds(c.n), qthresholds(37);
      for (int64_t i = 0; i < c.n; ++i)  // the distance of a near neighbour, or a little more
        thresholds[i] = nn.distance[i * nn.k + i % nn.k] * (i % 3 == 0 ? 1.0 : 1.01);
      for (int64_t i = 0; i < 37; ++i) qthresholds[i] = thresholds[i * 7 % c.n] * 1.5;
      const KnnRangeResult ref = brute_force_range(p, nullptr, thresholds);
      const KnnRangeResult cpu = cpu_knn_range(p, nullptr, thresholds.data(), 1, nullptr);
      EXPECT(same_range(ref, cpu), "range case %u %s: cpu against brute force", c.seed, name);
      EXPECT(same_range(cpu, cpu_knn_range(p, nullptr, thresholds.data(), 3, nullptr)), "range case %u %s: threads",
             c.seed, name);
      EXPECT(ref.offsets.back() > c.n, "range case %u %s: more than the points themselves", c.seed, name);
      const KnnRangeResult qref = brute_force_range(p, &qp, qthresholds);
      EXPECT(same_range(qref, cpu_knn_range(p, &qp, qthresholds.data(), 2, nullptr)), "range case %u %s: queries",
             c.seed, name);
      if (gpu.devices.empty()) continue;
      for (int64_t limit : {int64_t(0), int64_t(1) << 18}) {  // resident; reference points in blocks
        GpuOptions options;
        options.devices.push_back(0);
        options.memory_limit = limit;
        options.host_threads = 2;
        EXPECT(same_range(cpu, gpu_knn_range(p, nullptr, thresholds.data(), options, nullptr)),
               "range case %u %s: gpu (limit %lld)", c.seed, name, (long long)limit);
        EXPECT(same_range(qref, gpu_knn_range(p, &qp, qthresholds.data(), options, nullptr)),
               "range case %u %s: gpu queries (limit %lld)", c.seed, name, (long long)limit);
      }
      {  // the reference points kept on the device, searched twice
        GpuOptions options;
        options.devices.push_back(0);
        const std::shared_ptr<GpuKnnKept> kept = gpu_knn_keep(p, options);
        EXPECT(same_range(cpu, gpu_knn_range(p, nullptr, thresholds.data(), options, nullptr, kept.get())),
               "range case %u %s: gpu kept", c.seed, name);
        EXPECT(same_range(qref, gpu_knn_range(p, &qp, qthresholds.data(), options, nullptr, kept.get())),
               "range case %u %s: gpu kept queries", c.seed, name);
      }
      if (gpu.devices.size() > 1) {
        GpuOptions options;
        options.devices = {0, 1};
        EXPECT(same_range(cpu, gpu_knn_range(p, nullptr, thresholds.data(), options, nullptr)),
               "range case %u %s: two gpus", c.seed, name);
      }
    }
  }
  // A lattice with thresholds exactly at its distances (1, sqrt 2, 2): every boundary pair is
  // decided by the exact key.
  {
    const int64_t n = 1024;
    std::vector<double> x(n * 5);
    for (int64_t i = 0; i < n; ++i)
      for (int32_t t = 0; t < 5; ++t) x[t * n + i] = double((i >> (2 * t)) % 4);
    for (KnnMetric m : {KnnMetric::euclidean, KnnMetric::manhattan}) {
      const KnnPoints p = prepare_points(x.data(), n, 5, m, 2);
      for (double t : {1.0, std::sqrt(2.0), 2.0}) {
        const std::vector<double> thresholds(n, t);
        const KnnRangeResult cpu = cpu_knn_range(p, nullptr, thresholds.data(), 2, nullptr);
        EXPECT(same_range(brute_force_range(p, nullptr, thresholds), cpu), "range lattice %s %g: cpu", names[int(m)], t);
        if (gpu.devices.empty()) continue;
        GpuOptions options;
        options.devices.push_back(0);
        EXPECT(same_range(cpu, gpu_knn_range(p, nullptr, thresholds.data(), options, nullptr)), "range lattice %s %g: gpu",
               names[int(m)], t);
      }
    }
    // A point's 1-neighbourhood on the lattice: itself and its 2 to 5 axis neighbours.
    const std::vector<double> ones(n, 1.0);
    const KnnPoints p = prepare_points(x.data(), n, 5, KnnMetric::euclidean, 2);
    const KnnRangeResult r = cpu_knn_range(p, nullptr, ones.data(), 2, nullptr);
    EXPECT(r.offsets[1] - r.offsets[0] == 6 && r.index[0] == 0 && r.distance[0] == 0.0 && r.distance[1] == 1.0,
           "range lattice: the corner's neighbourhood");
  }
  // SNN weights on a tiny graph checked by hand: 0 - 1 - 2 in a line, k = 1.
  {
    KnnResult r;
    r.n_queries = 3;
    r.k = 1;
    r.index = {1, 0, 1};
    const WeightedEdges e = snn_edges(r, SnnType::rank, 1);
    // 0 and 1 share 0 (ranks 0 + 1) and 1 (1 + 0): r = 1, weight 0.5; 0 and 2 share 1 (1 + 1): r = 2,
    // weight 0 -> 1e-6; 1 and 2 share 1 (0 + 1): weight 0.5.
    EXPECT(e.from == (std::vector<int32_t>{0, 0, 1}) && e.to == (std::vector<int32_t>{1, 2, 2}), "snn edges");
    EXPECT(e.weight.size() == 3 && e.weight[0] == 0.5 && e.weight[1] == 1e-6 && e.weight[2] == 0.5, "snn weights");
  }
}
