// Which CUPTI chip name stands for a GPU of a given compute capability, so the cost of a
// metrics pass can be computed offline (libcupti's profiler host API takes a chip name and
// needs no GPU) before the pass starts, from the compute capability a trace pass recorded.
//
// Data, one row per compute capability (NVIDIA's CUDA GPU list gives the capability of each
// product; the chip is the largest die of that architecture, whose name libcupti 13.0
// lists in cuptiProfilerHostGetSupportedChips). Smaller dies of the same architecture
// (GA104, AD104, GB203, ...) schedule the default metric set in the same number of passes
// (checked offline for GA102/104/107, AD102/104/107, GB202/203/207; profiler_cupti_real_test).
// Plain C++; thread-safe (constant data).
#ifndef QPROF_PROFILER_CUPTI_CHIP_NAMES_H_
#define QPROF_PROFILER_CUPTI_CHIP_NAMES_H_

namespace qprof::profiler::cupti {

struct ChipRow {
  int cc_major;
  int cc_minor;
  const char* chip;      // CUPTI's name ("GH100")
  const char* products;  // for messages ("H100, H200")
};

// The rows, in compute capability order.
const ChipRow* ChipRows(int* count);

// The row for `major.minor`, or nullptr for a capability not in the table.
const ChipRow* ChipForComputeCapability(int major, int minor);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_CHIP_NAMES_H_
