// Function multi-versioning: FSGPU_TARGET_CLONES("avx2", "default") before a function compiles it
// for each target and lets the loader pick the best one the CPU has, so a package built on one
// x86-64 machine runs at full speed, and safely, on another. Only x86-64 GCC builds (not clang,
// whose support varies by version, nor other processors) get clones; elsewhere the function
// stays as it is.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__APPLE__)
#define FSGPU_TARGET_CLONES(...) __attribute__((target_clones(__VA_ARGS__)))
#else
#define FSGPU_TARGET_CLONES(...)
#endif
