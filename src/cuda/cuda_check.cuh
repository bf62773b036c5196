// Error checks and RAII holders for CUDA resources: every CUDA call goes through
// FSGPU_CUDA_CHECK, which throws with the error's name, so failures become R errors.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace fsgpu {

inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(status) + " in " + what + ": " +
                             cudaGetErrorString(status));
}
#define FSGPU_CUDA_CHECK(call) ::fsgpu::cuda_check((call), #call)

// After a launch: configuration errors now, and with FSGPU_CUDA_SYNC_DEBUG set at build time
// also faults inside the kernel, attributed to the right launch.
inline void check_launch(const char* kernel) {
  cuda_check(cudaGetLastError(), kernel);
#ifdef FSGPU_CUDA_SYNC_DEBUG
  cuda_check(cudaDeviceSynchronize(), kernel);
#endif
}

// Lets `kernel` take as much dynamic shared memory as the current device allows (its opt-in
// maximum less the kernel's static shared memory), set once per kernel and device. The cap is a
// process-wide property of the function, so it is only ever raised to that maximum: setting it to
// each launch's own size would let one host thread lower it between another thread's setting and
// launch. The launch's own size still decides the occupancy.
template <class Kernel>
void allow_dynamic_shared(Kernel kernel) {
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> done;
  int device = 0;
  FSGPU_CUDA_CHECK(cudaGetDevice(&device));
  const std::pair<const void*, int> key(reinterpret_cast<const void*>(kernel), device);
  std::lock_guard<std::mutex> lock(mutex);
  if (done.count(key)) return;
  int limit = 0;
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes;
  FSGPU_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  FSGPU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        limit - static_cast<int>(attributes.sharedSizeBytes)));
  done.insert(key);
}

// The dynamic plus static shared memory a block may take on `device` (the opt-in maximum), or
// `cap` when it is positive and lower.
inline int block_shared_limit(int device, int cap) {
  int limit = 0;
  FSGPU_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return cap > 0 && cap < limit ? cap : limit;
}

// Makes `device` current for a scope and restores the previous one.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    FSGPU_CUDA_CHECK(cudaGetDevice(&previous_));
    FSGPU_CUDA_CHECK(cudaSetDevice(device));
  }
  ~ScopedDevice() { cudaSetDevice(previous_); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

// Device memory for n elements of T on the current device.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { resize(n); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void resize(size_t n) {
    if (n == size_) return;
    release();
    if (n) FSGPU_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), n * sizeof(T)));
    size_ = n;
  }
  // Grows (never shrinks) to at least n elements; the contents are lost when it grows.
  void reserve(size_t n) {
    if (n > size_) resize(n);
  }
  // Copies n elements into the buffer, growing it when needed.
  void upload(const T* host, size_t n, cudaStream_t stream = 0) {
    reserve(n);
    if (n) FSGPU_CUDA_CHECK(cudaMemcpyAsync(data_, host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  T* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  size_t size_ = 0;
};

class Stream {
 public:
  Stream() { FSGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Page-locked host memory for n elements of T. A device-to-host cudaMemcpyAsync into it
// returns at once; into pageable memory it waits for the stream, which serialises launches
// meant to run on several devices together.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t n) {
    if (n) FSGPU_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), n * sizeof(T)));
  }
  ~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  PinnedBuffer(PinnedBuffer&& other) noexcept { std::swap(data_, other.data_); }
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
};

// Pins host memory that is copied to the device every step; unpinned copies still work,
// only slower, so a refusal is not an error.
class PinnedRegion {
 public:
  PinnedRegion(const void* data, size_t bytes) {
    if (bytes && cudaHostRegister(const_cast<void*>(data), bytes, cudaHostRegisterDefault) == cudaSuccess)
      data_ = data;
    else
      cudaGetLastError();  // clear the refusal
  }
  ~PinnedRegion() {
    if (data_) cudaHostUnregister(const_cast<void*>(data_));
  }
  PinnedRegion(const PinnedRegion&) = delete;
  PinnedRegion& operator=(const PinnedRegion&) = delete;

 private:
  const void* data_ = nullptr;
};

// Adds the seconds since the last mark to a phase, once the stream's work is done.
class PhaseClock {
 public:
  explicit PhaseClock(cudaStream_t s) : stream_(s), last_(std::chrono::steady_clock::now()) {}
  void mark(double& phase) {
    FSGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto now = std::chrono::steady_clock::now();
    phase += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  cudaStream_t stream_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace fsgpu
