// Included by the CPU files whose double arithmetic must round as the GPU's does (the device
// code uses __dadd_rn and __dmul_rn): no contraction of a * b + c into an fma in what follows.
#pragma once

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
