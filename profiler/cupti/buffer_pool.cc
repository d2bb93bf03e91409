#include "profiler/cupti/buffer_pool.h"

#include <algorithm>
#include <cstdlib>

namespace qprof::profiler::cupti {

BufferPool::BufferPool(size_t buffer_bytes, size_t cap_bytes)
    : buffer_bytes_((std::max<size_t>(buffer_bytes, kAlignment) + kAlignment - 1) /
                    kAlignment * kAlignment),
      max_buffers_(std::max<size_t>(1, cap_bytes / buffer_bytes_)) {}

BufferPool::~BufferPool() {
  // Only the free ones: a buffer CUPTI still holds is freed by whoever gets it back.
  for (uint8_t* b : free_) std::free(b);
}

uint8_t* BufferPool::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    return b;
  }
  if (all_.size() >= max_buffers_) {
    ++refused_;
    return nullptr;
  }
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, buffer_bytes_));
  if (b == nullptr) {
    ++refused_;
    return nullptr;
  }
  all_.push_back(b);
  return b;
}

bool BufferPool::Release(uint8_t* buffer) {
  if (buffer == nullptr) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(all_.begin(), all_.end(), buffer) == all_.end()) {
    ++unknown_released_;
    return false;
  }
  free_.push_back(buffer);
  return true;
}

uint64_t BufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return all_.size();
}
uint64_t BufferPool::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}
uint64_t BufferPool::unknown_released() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unknown_released_;
}
uint64_t BufferPool::outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return all_.size() - free_.size();
}
size_t BufferPool::bytes_held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return all_.size() * buffer_bytes_;
}

}  // namespace qprof::profiler::cupti
