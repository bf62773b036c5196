// The test driver's check: counts every expectation and prints the failed ones.
#pragma once

#include <cstdio>

#include "core/gpu_backend.h"

extern int failures, checks;
#define EXPECT(cond, ...)                               \
  do {                                                  \
    ++checks;                                           \
    if (!(cond)) {                                      \
      ++failures;                                       \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__);  \
      std::printf(__VA_ARGS__);                         \
      std::printf("\n");                                \
    }                                                   \
  } while (0)

// Discretization: CPU thread counts, and the GPU against the CPU (test_discretize.cpp).
void discretize_tests(const fsgpu::GpuStatus& gpu);

// kNN: the CPU against brute force, the GPU against the CPU (test_knn.cpp).
void knn_tests(const fsgpu::GpuStatus& gpu);

// Interaction search: MDFS draws, the CPU against direct gains, the GPU against the CPU
// (test_interactions.cpp).
void interaction_tests(const fsgpu::GpuStatus& gpu);

// The GPU pair search's kernels, tensor cores and popcount, against the CPU (test_pairs.cpp).
void pair_kernel_tests(const fsgpu::GpuStatus& gpu);

// LibSVM and ARFF parsers: results and the position of every error (test_text_formats.cpp).
void text_format_tests();

// Selections on subsamples: against each subsample encoded alone, every thread count, sparse
// against dense, the GPU engine against the CPU (test_batched.cpp).
void batched_tests(const fsgpu::GpuStatus& gpu);
