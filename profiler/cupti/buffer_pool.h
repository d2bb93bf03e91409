// Activity buffers handed to CUPTI, from a pool with a memory cap.
//
// Why these numbers: CUPTI recommends activity buffers of 1-10 MB; 8 MiB holds about
// 40k kernel records (~200 bytes each), so a decode step's launches fit in a buffer
// or two and CUPTI does not call back for new buffers on every step. The total cap
// (default 256 MiB) bounds what a profiler may take from someone else's process: when it
// is reached Acquire() returns nullptr, CUPTI drops the records it cannot store and
// counts them (cuptiActivityGetNumDroppedRecords), and the trace says so.
// Released buffers are reused, so a long run that is flushed regularly stays at a few
// buffers.
//
// Thread-safety: all methods may be called from any thread (CUPTI requests and returns
// buffers on its own threads). Never throws: allocation failure is a nullptr.
// Destruction frees the buffers the pool holds; a buffer still out (CUPTI has it) stays
// allocated and is freed with std::free by whoever receives it later (the collector's
// BufferCompleted when no collector is running), so a late completion never touches
// freed memory.
#ifndef QPROF_PROFILER_CUPTI_BUFFER_POOL_H_
#define QPROF_PROFILER_CUPTI_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace qprof::profiler::cupti {

class BufferPool {
 public:
  static constexpr size_t kDefaultBufferBytes = 8u << 20;
  static constexpr size_t kDefaultCapBytes = 256u << 20;
  // CUPTI requires 8-byte aligned buffers (ACTIVITY_RECORD_ALIGNMENT).
  static constexpr size_t kAlignment = 8;

  // `buffer_bytes` is rounded up to a multiple of kAlignment; `cap_bytes` below one
  // buffer still allows one buffer.
  BufferPool(size_t buffer_bytes, size_t cap_bytes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A free buffer of buffer_bytes(), or nullptr when the cap is reached (counted in
  // refused()) or memory is exhausted.
  uint8_t* Acquire();
  // Returns a buffer obtained from Acquire(). False for a pointer this pool did not hand
  // out (counted; the caller owns it).
  bool Release(uint8_t* buffer);

  size_t buffer_bytes() const { return buffer_bytes_; }
  uint64_t allocated() const;       // buffers ever allocated (not reuses)
  uint64_t refused() const;         // Acquire() calls answered with nullptr
  uint64_t unknown_released() const;
  size_t bytes_held() const;        // bytes currently allocated, in use or free
  uint64_t outstanding() const;     // buffers acquired and not yet released

 private:
  const size_t buffer_bytes_;
  const size_t max_buffers_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> all_;   // every buffer allocated (owned)
  std::vector<uint8_t*> free_;
  uint64_t refused_ = 0;
  uint64_t unknown_released_ = 0;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_BUFFER_POOL_H_
