#include "tests/kernels/warp_emu/shared_mem_model.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace qprof::warp {
namespace {

std::string Who(int tid) {
  return tid == SharedMemoryModel::kAnyWarpReader ? std::string("several threads")
                                                  : absl::StrCat("thread ", tid);
}

}  // namespace

SharedMemoryModel::SharedMemoryModel() : mem_(kCapacity), shadow_(kCapacity) {}

std::string SharedMemoryModel::Reset(size_t dynamic_bytes) {
  // Only what the last block used needs clearing.
  std::fill(shadow_.begin(), shadow_.begin() + top_, ByteState{});
  std::memset(mem_.data(), 0xA5, top_);  // stale data, never zeros that would hide a bug
  regions_.clear();
  static_bytes_ = 0;
  if (dynamic_bytes > kCapacity) {
    return absl::StrCat("dynamic shared memory of ", dynamic_bytes, " bytes exceeds the ", kCapacity,
                        "-byte per-block limit");
  }
  const uint32_t dyn = static_cast<uint32_t>((dynamic_bytes + 15) / 16 * 16);
  if (dyn > 0) regions_.push_back({0, static_cast<uint32_t>(dynamic_bytes), nullptr});
  top_ = dyn;
  return "";
}

void* SharedMemoryModel::Static(const void* key, size_t bytes, size_t align, std::string* error) {
  for (const Region& r : regions_) {
    if (r.key == key) return mem_.data() + r.off;
  }
  const uint32_t off = static_cast<uint32_t>((top_ + align - 1) / align * align);
  if (off + bytes > kCapacity) {
    *error = absl::StrCat("shared memory exceeds the ", kCapacity, "-byte per-block limit (",
                          off + bytes, ")");
    return nullptr;
  }
  if (static_bytes_ + bytes > kStaticLimit) {  // still allocated: the launch goes on
    *error = absl::StrCat("static __shared__ variables exceed ", kStaticLimit, " bytes (",
                          static_bytes_ + bytes, ")");
  }
  regions_.push_back({off, static_cast<uint32_t>(bytes), key});
  static_bytes_ += static_cast<uint32_t>(bytes);
  top_ = off + static_cast<uint32_t>(bytes);
  return mem_.data() + off;
}

std::string SharedMemoryModel::LocateOffset(uint32_t off, size_t bytes, size_t align) const {
  if (align > 1 && off % align != 0) {
    return absl::StrCat("shared access of ", bytes, " bytes at ", Describe(off), " is not ", align,
                        "-byte aligned");
  }
  for (const Region& r : regions_) {
    if (off >= r.off && off + bytes <= static_cast<size_t>(r.off) + r.bytes) return "";
  }
  return absl::StrCat("shared access of ", bytes, " bytes at offset ", off,
                      " is outside every shared allocation of the block");
}

std::string SharedMemoryModel::Locate(const void* p, size_t bytes, size_t align, uint32_t* off) const {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  if (b < mem_.data() || b + bytes > mem_.data() + mem_.size()) {
    return "shared access through a pointer outside the block's shared memory";
  }
  *off = static_cast<uint32_t>(b - mem_.data());
  return LocateOffset(*off, bytes, align);
}

std::string SharedMemoryModel::Describe(uint32_t off) const {
  for (size_t i = 0; i < regions_.size(); ++i) {
    const Region& r = regions_[i];
    if (off >= r.off && off < r.off + r.bytes) {
      return r.key == nullptr ? absl::StrCat("dynamic+", off - r.off)
                              : absl::StrCat("static#", i, "+", off - r.off);
    }
  }
  return absl::StrCat("offset ", off);
}

std::string SharedMemoryModel::Read(int tid, uint32_t off, size_t bytes, uint32_t epoch, void* out) {
  std::string err;
  for (size_t i = 0; i < bytes; ++i) {
    ByteState& s = shadow_[off + i];
    if (err.empty()) {
      if (s.pending) {
        err = absl::StrCat(Who(tid), " reads ", Describe(off + i), " while thread ", s.writer,
                           "'s cp.async is still filling it (no completed cp.async.wait_group covers it)");
      } else if (s.writer < 0) {
        err = absl::StrCat(Who(tid), " reads ", Describe(off + i), ", which no thread wrote");
      } else if (s.writer != tid && s.w_epoch == epoch) {
        err = absl::StrCat(Who(tid), " reads ", Describe(off + i), " written by thread ", s.writer,
                           " with no barrier in between");
      }
    }
    if (s.r_epoch != epoch || s.reader == -1) {
      s.reader = static_cast<int16_t>(tid);
      s.r_epoch = epoch;
    } else if (s.reader != tid) {
      s.reader = kAnyWarpReader;
    }
  }
  std::memcpy(out, mem_.data() + off, bytes);
  return err;
}

std::string SharedMemoryModel::Write(int tid, uint32_t off, size_t bytes, uint32_t epoch, const void* in) {
  std::string err;
  for (size_t i = 0; i < bytes; ++i) {
    ByteState& s = shadow_[off + i];
    if (err.empty()) {
      if (s.pending) {
        err = absl::StrCat("thread ", tid, " writes ", Describe(off + i), " while thread ", s.writer,
                           "'s cp.async is still filling it");
      } else if (s.r_epoch == epoch && s.reader != -1 && s.reader != tid) {
        err = absl::StrCat("thread ", tid, " overwrites ", Describe(off + i), ", which ", Who(s.reader),
                           " read with no barrier in between");
      } else if (s.writer >= 0 && s.writer != tid && s.w_epoch == epoch) {
        err = absl::StrCat("thread ", tid, " overwrites ", Describe(off + i), ", which thread ", s.writer,
                           " wrote with no barrier in between");
      }
    }
    s.writer = static_cast<int16_t>(tid);
    s.w_epoch = epoch;
  }
  std::memcpy(mem_.data() + off, in, bytes);
  return err;
}

std::string SharedMemoryModel::CpAsyncIssue(int tid, uint32_t off, size_t bytes, uint32_t epoch) {
  std::string err;
  for (size_t i = 0; i < bytes; ++i) {
    ByteState& s = shadow_[off + i];
    if (err.empty()) {
      if (s.pending) {
        err = absl::StrCat("thread ", tid, "'s cp.async targets ", Describe(off + i), " while thread ",
                           s.writer, "'s cp.async is still filling it");
      } else if (s.r_epoch == epoch && s.reader != -1 && s.reader != tid) {
        err = absl::StrCat("thread ", tid, "'s cp.async overwrites ", Describe(off + i), ", which ",
                           Who(s.reader), " read with no barrier in between");
      } else if (s.writer >= 0 && s.writer != tid && s.w_epoch == epoch) {
        err = absl::StrCat("thread ", tid, "'s cp.async overwrites ", Describe(off + i), ", which thread ",
                           s.writer, " wrote with no barrier in between");
      }
    }
    s.writer = static_cast<int16_t>(tid);
    s.pending = 1;
  }
  return err;
}

void SharedMemoryModel::CpAsyncLand(int tid, uint32_t off, const uint8_t* data, size_t bytes, uint32_t epoch) {
  for (size_t i = 0; i < bytes; ++i) {
    ByteState& s = shadow_[off + i];
    s.pending = 0;
    s.writer = static_cast<int16_t>(tid);
    s.w_epoch = epoch;
  }
  std::memcpy(mem_.data() + off, data, bytes);
}

}  // namespace qprof::warp
