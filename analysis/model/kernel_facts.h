// Compile facts of our own CUDA kernels per architecture, for the model's latency and
// issue terms: registers and static shared memory (occupancy, hence how many blocks and
// loads are in flight) and the static instruction and FFMA counts of each kernel's main
// FMA loops (issue slots per FMA). The table (kernel_facts_data.cc) is generated from a CUDA
// build by scripts/update_kernel_facts.py; analysis/ reads it without CUDA.
#ifndef QPROF_ANALYSIS_MODEL_KERNEL_FACTS_H_
#define QPROF_ANALYSIS_MODEL_KERNEL_FACTS_H_

#include <string_view>
#include <vector>

namespace qprof::model {

struct KernelFacts {
  const char* kernel;  // "qprof_moe_slot_gemv_mxfp4_w13"
  const char* arch;    // "sm_120a"
  int registers;
  int static_shared_bytes;
  int fma_loop_instructions;  // one iteration of each innermost loop holding FFMA, summed
  int fma_loop_ffma;
};

extern const char kKernelFactsSource[];
const std::vector<KernelFacts>& AllKernelFacts();

// The facts of `kernel` compiled for the architecture of `arch` ("sm_120" matches the
// table's "sm_120a"); nullptr when that kernel was not built for it.
const KernelFacts* FindKernelFacts(std::string_view kernel, std::string_view arch);

// Issue slots per FMA of the kernel's innermost FMA loops (instructions / FFMA); 0 = unknown.
double IssueSlotsPerFma(const KernelFacts& f);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_KERNEL_FACTS_H_
