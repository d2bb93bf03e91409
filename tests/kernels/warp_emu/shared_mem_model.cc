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

// The data is allocated whole (pointers into it must stay valid while a block runs); the
// shadow state (28 bytes per byte) grows with what the blocks use.
SharedMemoryModel::SharedMemoryModel() : mem_(kCapacity) {}

void SharedMemoryModel::Grow(uint32_t top) {
  if (shadow_.size() < top) shadow_.resize(top);
}

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
  Grow(top_);
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
  Grow(top_);
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

bool SharedMemoryModel::WriteOrdered(const ByteState& s, const Accessor& a) {
  if (s.writer < 0 || s.writer == a.tid || s.w_epoch != a.epoch) return true;
  return s.writer / 32 == a.warp && a.warp_syncs > s.w_syncs;  // a __syncwarp in between
}

bool SharedMemoryModel::ReadsOrdered(const ByteState& s, const Accessor& a) {
  if (s.reader == -1 || s.r_epoch != a.epoch || s.reader == a.tid) return true;
  // Readers of this warp only: a __syncwarp, or a warp collective after the latest read.
  return s.reader_warp == a.warp && (a.warp_syncs > s.r_syncs || a.warp_collectives > s.r_colls);
}

std::string SharedMemoryModel::Read(const Accessor& a, uint32_t off, size_t bytes, void* out) {
  std::string err;
  for (size_t i = 0; i < bytes; ++i) {
    ByteState& s = shadow_[off + i];
    if (err.empty()) {
      if (s.pending) {
        err = absl::StrCat(Who(a.tid), " reads ", Describe(off + i), " while thread ", s.writer,
                           "'s cp.async is still filling it (no completed cp.async.wait_group covers it)");
      } else if (s.writer < 0) {
        err = absl::StrCat(Who(a.tid), " reads ", Describe(off + i), ", which no thread wrote");
      } else if (!WriteOrdered(s, a)) {
        err = absl::StrCat(Who(a.tid), " reads ", Describe(off + i), " written by thread ", s.writer,
                           s.writer / 32 == a.warp ? " of its warp with no barrier or __syncwarp in between"
                                                   : " with no barrier in between");
      }
    }
    if (s.r_epoch != a.epoch || s.reader == -1) {
      s.reader = static_cast<int16_t>(a.tid);
      s.reader_warp = static_cast<int16_t>(a.warp);
      s.r_epoch = a.epoch;
    } else {
      if (s.reader != a.tid) s.reader = kAnyWarpReader;
      if (s.reader_warp != a.warp) s.reader_warp = -2;
    }
    s.r_syncs = a.warp_syncs;
    s.r_colls = a.warp_collectives;
  }
  std::memcpy(out, mem_.data() + off, bytes);
  return err;
}

std::string SharedMemoryModel::Write(const Accessor& a, uint32_t off, size_t bytes, const void* in) {
  std::string err;
  for (size_t i = 0; i < bytes; ++i) {
    ByteState& s = shadow_[off + i];
    if (err.empty()) {
      if (s.pending) {
        err = absl::StrCat("thread ", a.tid, " writes ", Describe(off + i), " while thread ", s.writer,
                           "'s cp.async is still filling it");
      } else if (!ReadsOrdered(s, a)) {
        err = absl::StrCat("thread ", a.tid, " overwrites ", Describe(off + i), ", which ", Who(s.reader),
                           " read with no barrier in between");
      } else if (!WriteOrdered(s, a)) {
        err = absl::StrCat("thread ", a.tid, " overwrites ", Describe(off + i), ", which thread ", s.writer,
                           " wrote with no barrier in between");
      }
    }
    s.writer = static_cast<int16_t>(a.tid);
    s.w_epoch = a.epoch;
    s.w_syncs = a.warp_syncs;
  }
  std::memcpy(mem_.data() + off, in, bytes);
  return err;
}

std::string SharedMemoryModel::CpAsyncIssue(const Accessor& a, uint32_t off, size_t bytes) {
  std::string err;
  for (size_t i = 0; i < bytes; ++i) {
    ByteState& s = shadow_[off + i];
    if (err.empty()) {
      if (s.pending) {
        err = absl::StrCat("thread ", a.tid, "'s cp.async targets ", Describe(off + i), " while thread ",
                           s.writer, "'s cp.async is still filling it");
      } else if (!ReadsOrdered(s, a)) {
        err = absl::StrCat("thread ", a.tid, "'s cp.async overwrites ", Describe(off + i), ", which ",
                           Who(s.reader), " read with no barrier in between");
      } else if (!WriteOrdered(s, a)) {
        err = absl::StrCat("thread ", a.tid, "'s cp.async overwrites ", Describe(off + i), ", which thread ",
                           s.writer, " wrote with no barrier in between");
      }
    }
    s.writer = static_cast<int16_t>(a.tid);
    s.pending = 1;
  }
  return err;
}

void SharedMemoryModel::CpAsyncLand(const Accessor& a, uint32_t off, const uint8_t* data, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    ByteState& s = shadow_[off + i];
    s.pending = 0;
    s.writer = static_cast<int16_t>(a.tid);
    s.w_epoch = a.epoch;
    s.w_syncs = a.warp_syncs;
  }
  std::memcpy(mem_.data() + off, data, bytes);
}

}  // namespace qprof::warp
