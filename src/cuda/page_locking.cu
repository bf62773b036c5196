// Page-locking of the host blocks that searches keep from call to call (core/host_blocks.h): a
// device copies page-locked memory directly, while an upload from pageable memory goes through a
// staging copy (upload_staged in knn.cu).
#include "core/gpu_backend.h"
#include "core/host_blocks.h"
#include "cuda_check.cuh"

namespace fsgpu {

namespace {

// Portable: page-locked for every device's context, not only the current one's. A refusal
// leaves the block pageable, and is cleared so that no later launch check reports it.
bool lock_pages(void* p, size_t bytes) {
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess) return true;
  cudaGetLastError();
  return false;
}

void unlock_pages(void* p) {
  if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
}

const PageLocking kCudaPageLocking{lock_pages, unlock_pages};

}  // namespace

void gpu_lock_host_blocks() { set_page_locking(&kCudaPageLocking); }

}  // namespace fsgpu
