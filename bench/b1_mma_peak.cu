// The peak rate of the binary tensor-core mma (m16n8k256, AND + POPC) and of 32-bit popcounts
// on GPU 0, and a check of the fragment layout src/cuda/b1_mma.cuh assumes. The physical
// limits bench/interactions.R reports against. Build and run:
//   nvcc -O3 -arch=sm_90 -o b1_mma_peak bench/b1_mma_peak.cu && ./b1_mma_peak
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "../src/cuda/b1_mma.cuh"

using fsgpu::b1_mma_and_popc;  // the wrapper the kernels use

// A: 16 rows x 8 words (256 bits), B: 8 cols x 8 words. Assumed layout: a0 row g bits word t,
// a1 row g+8 word t, a2 row g word 4+t, a3 row g+8 word 4+t; b0 col g word t, b1 col g word 4+t;
// d0,d1 row g cols 2t,2t+1; d2,d3 row g+8.
__global__ void layout_kernel(const uint32_t* A, const uint32_t* B, int* D) {
  int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
  uint32_t a[4] = {A[g * 8 + t], A[(g + 8) * 8 + t], A[g * 8 + 4 + t], A[(g + 8) * 8 + 4 + t]};
  uint32_t b[2] = {B[g * 8 + t], B[g * 8 + 4 + t]};
  int d[4] = {0, 0, 0, 0};
  b1_mma_and_popc(d, a, b);
  D[g * 8 + 2 * t] = d[0]; D[g * 8 + 2 * t + 1] = d[1];
  D[(g + 8) * 8 + 2 * t] = d[2]; D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

__global__ void throughput_kernel(int iters, int* out) {
  uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, ~threadIdx.x, 0x5555u};
  uint32_t b[2] = {threadIdx.x * 7u, 0xf0f0u};
  int d0[4] = {}, d1[4] = {}, d2[4] = {}, d3[4] = {};
  for (int i = 0; i < iters; ++i) {
    b1_mma_and_popc(d0, a, b); b1_mma_and_popc(d1, a, b); b1_mma_and_popc(d2, a, b); b1_mma_and_popc(d3, a, b);
    a[0] += 1;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = d0[0] + d1[1] + d2[2] + d3[3];
}

__global__ void popc_kernel(int iters, int* out) {
  uint64_t x = threadIdx.x * 0x9E3779B97F4A7C15ull, y = ~x;
  int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  for (int i = 0; i < iters; ++i) {
    c0 += __popcll(x & y); c1 += __popcll(x ^ y); c2 += __popcll(x | (y + 1)); c3 += __popcll(x + y);
    x += 0x1234567ull;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = c0 + c1 + c2 + c3;
}

int main() {
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  int clock_khz = 0; cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  printf("device %s, %d SMs, clock %d MHz\n", p.name, p.multiProcessorCount, clock_khz / 1000);
  std::vector<uint32_t> A(16 * 8), B(8 * 8); std::vector<int> D(16 * 8), R(16 * 8);
  srand(1);
  for (auto& v : A) v = (uint32_t(rand()) << 16) ^ uint32_t(rand());
  for (auto& v : B) v = (uint32_t(rand()) << 16) ^ uint32_t(rand());
  for (int r = 0; r < 16; ++r) for (int c = 0; c < 8; ++c) {
    int s = 0; for (int w = 0; w < 8; ++w) s += __builtin_popcount(A[r * 8 + w] & B[c * 8 + w]);
    R[r * 8 + c] = s;
  }
  uint32_t *dA, *dB; int *dD, *dout;
  cudaMalloc(&dA, 512); cudaMalloc(&dB, 256); cudaMalloc(&dD, 512);
  cudaMemcpy(dA, A.data(), 512, cudaMemcpyHostToDevice); cudaMemcpy(dB, B.data(), 256, cudaMemcpyHostToDevice);
  layout_kernel<<<1, 32>>>(dA, dB, dD);
  cudaError_t e = cudaDeviceSynchronize();
  printf("layout kernel: %s\n", cudaGetErrorString(e));
  cudaMemcpy(D.data(), dD, 512, cudaMemcpyDeviceToHost);
  int bad = 0; for (int i = 0; i < 128; ++i) bad += D[i] != R[i];
  printf("layout check: %d of 128 wrong (D[0]=%d R[0]=%d)\n", bad, D[0], R[0]);
  const int blocks = p.multiProcessorCount * 8, threads = 256, iters = 20000;
  cudaMalloc(&dout, blocks * threads * 4);
  cudaEvent_t s0, s1; cudaEventCreate(&s0); cudaEventCreate(&s1);
  for (int rep = 0; rep < 2; ++rep) {
    cudaEventRecord(s0); throughput_kernel<<<blocks, threads>>>(iters, dout); cudaEventRecord(s1);
    cudaEventSynchronize(s1); float ms; cudaEventElapsedTime(&ms, s0, s1);
    double mmas = double(blocks) * threads / 32 * iters * 4;
    double per_sm_clk = mmas / (ms * 1e-3) / p.multiProcessorCount / (clock_khz * 1e3);
    printf("b1 mma m16n8k256: %.3f ms, %.3e mma/s, %.3f mma per SM per clock, %.1f T bit-and-popc/s\n", ms,
           mmas / (ms * 1e-3), per_sm_clk, mmas * 32768 / (ms * 1e-3) / 1e12);
    cudaEventRecord(s0); popc_kernel<<<blocks, threads>>>(iters, dout); cudaEventRecord(s1);
    cudaEventSynchronize(s1); cudaEventElapsedTime(&ms, s0, s1);
    double popc = double(blocks) * threads * iters * 4 * 2;  // 32-bit popcounts
    printf("popc: %.3f ms, %.3f 32-bit popc per SM per clock\n", ms,
           popc / (ms * 1e-3) / p.multiProcessorCount / (clock_khz * 1e3));
  }
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
