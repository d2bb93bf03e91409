#include "tests/kernels/warp_emu/global_race_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace qprof::warp {
namespace {

std::string Block(uint32_t shadow) { return absl::StrCat("block #", shadow - 1); }

}  // namespace

void GlobalRaceModel::Reset() {
  for (Shadow& s : shadows_) {
    if (!s.used) continue;
    std::fill(s.writer.begin(), s.writer.end(), kNone);
    std::fill(s.reader.begin(), s.reader.end(), kNone);
    s.used = false;
  }
}

std::string GlobalRaceModel::Access(size_t buffer, size_t size, const std::string& name, size_t off,
                                    size_t bytes, uint32_t block, bool write) {
  if (shadows_.size() <= buffer) shadows_.resize(buffer + 1);
  Shadow& s = shadows_[buffer];
  if (s.writer.size() != size) {
    s.writer.assign(size, kNone);
    s.reader.assign(size, kNone);
  }
  s.used = true;
  const uint32_t me = block + 1;
  std::string err;
  for (size_t i = off; i < off + bytes; ++i) {
    uint32_t& w = s.writer[i];
    uint32_t& r = s.reader[i];
    if (err.empty()) {
      const char* what = nullptr;
      uint32_t other = kNone;
      if (w != kNone && w != me) {
        what = "wrote";
        other = w;
      } else if (write && r != kNone && r != me) {
        what = "read";
        other = r;
      }
      if (what != nullptr) {
        err = absl::StrCat(write ? "store to " : "load from ", name, "+", i, ", which ",
                           other == kSeveral ? std::string("several blocks") : Block(other), " ", what,
                           " in the same launch: a race between blocks (nothing orders the blocks of a grid)");
      }
    }
    if (write) {
      w = me;
    } else {
      r = (r == kNone || r == me) ? me : kSeveral;
    }
  }
  return err;
}

}  // namespace qprof::warp
