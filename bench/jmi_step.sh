#!/bin/bash
# Builds tests/cpp (CUDA, sm_90) in BUILD and bench/jmi_step against its objects, then runs the
# step benchmark on every shape, and the CPU engine on one thread against the FEAST baseline.
# Run from the repository root on a GPU host:
#   bash bench/jmi_step.sh [BUILD] [k]
set -e
B=${1:-/tmp/b-jmi-step}
K=${2:-200}
cmake -S tests/cpp -B "$B" -DFSGPU_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$B" -j"$(nproc)" --target test_core > /dev/null
objects=$(find "$B/CMakeFiles/test_core.dir" -name '*.o' ! -name 'test_*.o')
nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Isrc -Isrc/core -I"$B" -c bench/jmi_step.cu -o "$B/jmi_step.o"
nvcc -arch=sm_90 "$B/jmi_step.o" $objects -Xcompiler -fopenmp -o "$B/jmi_step"
for shape in svhn16 svhn64 news20; do "$B/jmi_step" "$shape" "$K" 3; done
make -C bench/baseline > /dev/null
for shape in breast svhn64 svhn16 news20; do "$B/jmi_step" cpu "$shape" bench/baseline/feast_jmi; done
