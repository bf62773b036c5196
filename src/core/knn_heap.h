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

// Max-heap of up to `capacity` candidates (the worst on top), 4-ary: half the levels of a
// binary heap, and a level's 4 children are loaded together, so a replacement waits on about
// half as many dependent loads (the heaps live in global memory).
FSGPU_HD inline void candidate_heap_offer(KnnCandidate* heap, int32_t& size, int32_t capacity, KnnCandidate c) {
  if (size < capacity) {
    int32_t i = size++;
    while (i > 0) {
      const int32_t parent = (i - 1) / 4;
      const KnnCandidate p = heap[parent];
      if (!candidate_before(p.score, p.index, c.score, c.index)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = c;
    return;
  }
  if (!candidate_before(c.score, c.index, heap[0].score, heap[0].index)) return;
  int32_t i = 0;
  for (;;) {
    const int32_t first = 4 * i + 1;
    if (first >= size) break;
    KnnCandidate child[4];
    for (int j = 0; j < 4; ++j) child[j] = first + j < size ? heap[first + j] : KnnCandidate{-INFINITY, INT_MIN};
    KnnCandidate worst = child[0];
    int at = 0;
    for (int j = 1; j < 4; ++j)
      if (candidate_before(worst.score, worst.index, child[j].score, child[j].index)) worst = child[j], at = j;
    if (!candidate_before(c.score, c.index, worst.score, worst.index)) break;
    heap[i] = worst;
    i = first + at;
  }
  heap[i] = c;
}

}  // namespace fsgpu
