// Host-to-device upload rates of the kNN search's double rows (1,533,876 x 296 doubles, 3.6 GB,
// from pageable memory) by the ways a host can send them: one pageable cudaMemcpy; staging
// rings as knn.cu's StagingLease (a shared ring of page-locked slots, each chunk copied in by
// all threads); one ring a thread; and, for reference, a page-locked source (the bus's rate) and
// a plain host memcpy on all threads. It measured what the engine's upload should reach when
// its staging copy ran on one thread (bench/results/knn-upload-2026-11-29-h200.md).
//
//   nvcc -O2 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp bench/h2d_staging.cu -o h2d_staging -lgomp
//   ./h2d_staging [threads=16]
#include <cuda_runtime.h>
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
using Clock = std::chrono::steady_clock;
static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
int main(int argc, char** argv) {
  const size_t bytes = size_t(1533876) * 296 * 8;
  const int threads = argc > 1 ? atoi(argv[1]) : 16;
  omp_set_num_threads(threads);
  char* host = (char*)malloc(bytes);
  auto t = Clock::now();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < (long)(bytes / 4096); ++i) memset(host + i * 4096, 1, 4096);
  printf("first touch of %.2f GB: %.3f s\n", bytes / 1e9, since(t));
  t = Clock::now();
  void* dev; CK(cudaMalloc(&dev, bytes)); CK(cudaDeviceSynchronize());
  printf("cudaMalloc: %.4f s\n", since(t));
  void* dev2; t = Clock::now(); CK(cudaMalloc(&dev2, bytes / 2)); CK(cudaMalloc(&dev2, bytes / 4)); printf("cudaMalloc 1.8+0.9 GB: %.4f s\n", since(t));
  cudaStream_t s; CK(cudaStreamCreate(&s));
  // direct pageable
  for (int r = 0; r < 2; ++r) { t = Clock::now(); CK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s)); CK(cudaStreamSynchronize(s)); printf("pageable cudaMemcpy: %.4f s (%.1f GB/s)\n", since(t), bytes / since(t) / 1e9); }
  // current scheme: 3 slots of 8 MB, parallel memcpy per chunk (grain 1 MB)
  for (size_t chunk : {size_t(8) << 20, size_t(32) << 20}) for (int slots : {3, 6}) {
    std::vector<char*> slot(slots); std::vector<cudaEvent_t> ev(slots);
    for (int b = 0; b < slots; ++b) { CK(cudaHostAlloc(&slot[b], chunk, 0)); CK(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming)); }
    for (int r = 0; r < 2; ++r) {
      t = Clock::now();
      for (size_t at = 0, c = 0; at < bytes; at += chunk, ++c) {
        const int b = c % slots; const size_t len = std::min(chunk, bytes - at);
        if (c >= (size_t)slots) CK(cudaEventSynchronize(ev[b]));
        const int parts = std::max<size_t>(1, std::min<size_t>(threads, len >> 20));
#pragma omp parallel for num_threads(parts)
        for (int p = 0; p < parts; ++p) { size_t b0 = len * p / parts, b1 = len * (p + 1) / parts; memcpy(slot[b] + b0, host + at + b0, b1 - b0); }
        CK(cudaMemcpyAsync((char*)dev + at, slot[b], len, cudaMemcpyHostToDevice, s)); CK(cudaEventRecord(ev[b], s));
      }
      CK(cudaStreamSynchronize(s));
      printf("shared ring, chunk %zu MB, %d slots: %.4f s (%.1f GB/s)\n", chunk >> 20, slots, since(t), bytes / since(t) / 1e9);
    }
    for (int b = 0; b < slots; ++b) { cudaFreeHost(slot[b]); cudaEventDestroy(ev[b]); }
  }
  // per-thread rings: thread p takes chunks p, p + T, ... with 2 slots of its own
  for (size_t chunk : {size_t(2) << 20, size_t(4) << 20, size_t(8) << 20}) for (int T : {4, 8, 16}) {
    if (T > threads) continue;
    std::vector<char*> slot(2 * T); std::vector<cudaEvent_t> ev(2 * T);
    for (int b = 0; b < 2 * T; ++b) { CK(cudaHostAlloc(&slot[b], chunk, 0)); CK(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming)); }
    for (int r = 0; r < 2; ++r) {
      t = Clock::now();
      const size_t n_chunks = (bytes + chunk - 1) / chunk;
#pragma omp parallel num_threads(T)
      {
        const int p = omp_get_thread_num(); size_t k = 0;
        for (size_t c = p; c < n_chunks; c += T, ++k) {
          const int b = 2 * p + (k % 2); const size_t at = c * chunk, len = std::min(chunk, bytes - at);
          if (k >= 2) cudaEventSynchronize(ev[b]);
          memcpy(slot[b], host + at, len);
          cudaMemcpyAsync((char*)dev + at, slot[b], len, cudaMemcpyHostToDevice, s); cudaEventRecord(ev[b], s);
        }
      }
      CK(cudaStreamSynchronize(s));
      printf("per-thread rings, chunk %zu MB, %d threads: %.4f s (%.1f GB/s)\n", chunk >> 20, T, since(t), bytes / since(t) / 1e9);
    }
    for (int b = 0; b < 2 * T; ++b) { cudaFreeHost(slot[b]); cudaEventDestroy(ev[b]); }
  }
  // pinned source (the bus's rate)
  char* pinned; CK(cudaHostAlloc(&pinned, size_t(1) << 30, 0));
  for (int r = 0; r < 2; ++r) { t = Clock::now(); for (int i = 0; i < 3; ++i) CK(cudaMemcpyAsync((char*)dev + (size_t(i) << 30), pinned, size_t(1) << 30, cudaMemcpyHostToDevice, s)); CK(cudaStreamSynchronize(s)); printf("pinned 3 GB: %.4f s (%.1f GB/s)\n", since(t), 3.0 * (1 << 30) / since(t) / 1e9); }
  // host memcpy rate, all threads
  char* other = (char*)malloc(bytes);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < (long)(bytes / 4096); ++i) other[i * 4096] = 0;
  for (int r = 0; r < 2; ++r) { t = Clock::now();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < (long)(bytes >> 22); ++i) memcpy(other + (size_t(i) << 22), host + (size_t(i) << 22), size_t(1) << 22);
  printf("host memcpy %d threads: %.4f s (%.1f GB/s)\n", threads, since(t), bytes / since(t) / 1e9); }
  return 0;
}
