// The binary tensor-core product of sm_80 and later, as PTX: mma.sync m16n8k256 with AND + POPC.
#pragma once

#include <cstdint>

namespace fsgpu {

// d += popc(A AND B) for A: 16 rows x 256 bits, B: 256 bits x 8 columns, 32-bit counts. Lane
// (g, t) = (lane / 4, lane % 4) holds a[0]: row g, bits 32t..32t+31; a[1]: row g + 8, the same
// bits; a[2], a[3]: rows g and g + 8, bits 128 + 32t..; b[0], b[1]: column g, bits 32t.. and
// 128 + 32t..; and receives d[0], d[1]: row g, columns 2t and 2t + 1; d[2], d[3]: row g + 8
// (bench/b1_mma_peak.cu checks this layout on the device).
__device__ __forceinline__ void b1_mma_and_popc(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

}  // namespace fsgpu
