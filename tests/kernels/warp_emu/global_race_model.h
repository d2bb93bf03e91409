// Races between the blocks of one launch on global memory, for the accesses a kernel body
// makes through the warp primitives (Ldg, LdGlobal, StGlobal, ld.global.nc, cp.async
// sources).
//
// The blocks of a grid have no ordering among themselves: no barrier spans them, and the
// kernels here use no atomics, fences or grid-wide synchronisation. So within one launch a
// byte that one block writes must not be read or written by any other block; the order in
// which the emulation happens to run the blocks (one after another, or interleaved at
// barriers: warp_emu.h) proves nothing, and the check does not depend on it. Per
// registered buffer a shadow (created at its first access in a launch) keeps, per byte, the
// block that wrote it and the block that read it (or "several"); a conflicting access is
// reported with both blocks. Launches are ordered (a stream), so every launch starts clean.
//
// Plain scalar loads and stores of a body (not through a primitive) are not seen.
#ifndef QPROF_TESTS_KERNELS_WARP_EMU_GLOBAL_RACE_MODEL_H_
#define QPROF_TESTS_KERNELS_WARP_EMU_GLOBAL_RACE_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qprof::warp {

class GlobalRaceModel {
 public:
  // A new launch: forgets every access.
  void Reset();
  // An access of `bytes` at byte `off` of buffer `buffer` (of `size` bytes, named `name`)
  // by the block with linear index `block`. Returns "" or the race it makes.
  std::string Access(size_t buffer, size_t size, const std::string& name, size_t off, size_t bytes,
                     uint32_t block, bool write);

 private:
  static constexpr uint32_t kNone = 0;           // shadow values are block + 1
  static constexpr uint32_t kSeveral = 0xFFFFFFFFu;
  struct Shadow {
    std::vector<uint32_t> writer, reader;
    bool used = false;
  };
  std::vector<Shadow> shadows_;
};

}  // namespace qprof::warp

#endif  // QPROF_TESTS_KERNELS_WARP_EMU_GLOBAL_RACE_MODEL_H_
