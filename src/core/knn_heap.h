// The GPU candidate pass's heap (cuda/knn.cu), compiled for the host as well, so that the C++
// tests check it against a sort.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>

#include "criteria.h"  // FSGPU_HD
#include "knn.h"

namespace fsgpu {

// Whether candidate (s, j) comes before (s2, j2): the smaller score, then the lower index.
FSGPU_HD inline bool candidate_before(float s, int32_t j, float s2, int32_t j2) { return s < s2 || (s == s2 && j < j2); }

// Max-heap of up to `capacity` candidates (the worst on top), 8-ary: a third of the levels of a
// binary heap, and a level's children are loaded together, so a replacement waits on few
// dependent loads (the heaps live in global memory: 3 levels for the 116 candidates of k = 20).
// The caller keeps the top (heap[0], when size > 0) in `top`, which an offer updates: a
// candidate that does not beat a full heap's top costs no memory access.
constexpr int32_t kHeapArity = 8;

FSGPU_HD inline void candidate_heap_offer(KnnCandidate* heap, int32_t& size, int32_t capacity, KnnCandidate c,
                                          KnnCandidate& top) {
  if (size < capacity) {
    if (size == 0 || candidate_before(top.score, top.index, c.score, c.index)) top = c;  // c rises to the top
    int32_t i = size++;
    while (i > 0) {
      const int32_t parent = (i - 1) / kHeapArity;
      const KnnCandidate p = heap[parent];
      if (!candidate_before(p.score, p.index, c.score, c.index)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = c;
    return;
  }
  if (!candidate_before(c.score, c.index, top.score, top.index)) return;
  int32_t i = 0;
  for (;;) {
    const int32_t first = kHeapArity * i + 1;
    if (first >= size) break;
    KnnCandidate child[kHeapArity];
    for (int j = 0; j < kHeapArity; ++j)
      child[j] = first + j < size ? heap[first + j] : KnnCandidate{-INFINITY, INT_MIN};
    KnnCandidate worst = child[0];
    int at = 0;
    for (int j = 1; j < kHeapArity; ++j)
      if (candidate_before(worst.score, worst.index, child[j].score, child[j].index)) worst = child[j], at = j;
    if (!candidate_before(c.score, c.index, worst.score, worst.index)) break;
    heap[i] = worst;
    if (i == 0) top = worst;
    i = first + at;
  }
  heap[i] = c;
  if (i == 0) top = c;
}

}  // namespace fsgpu
