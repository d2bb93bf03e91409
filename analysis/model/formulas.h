// The closed-form pieces of the decode model, as pure functions (tested one by one in
// tests/analysis/model/formulas_test.cc).
//
//   kernel time   = max(bytes / (BW * eff_mem), simt_work / (SIMT * eff_simt),
//                       tensor_work / (TC * eff_tc)) + launch overhead
//   unique experts touched by B tokens, top-k of E, uniform routing:
//                   U(E, k, B) = E * (1 - (1 - k/E)^B)
//   ring all-reduce of S bytes over n ranks (nccl-tests doc/PERFORMANCE.md):
//                   t = base + 2(n-1) * hop + (2(n-1)/n) * S / (link * eff_link)
//   memory-level parallelism (Little's law): a launch keeping F bytes of loads in flight
//   streams at most F / latency; achievable bandwidth = min(BW * eff_mem, F / latency)
//   SIMT issue: I thread-instructions on S SMs take I / (S * 4 schedulers * 32 lanes * clock)
#ifndef QPROF_ANALYSIS_MODEL_FORMULAS_H_
#define QPROF_ANALYSIS_MODEL_FORMULAS_H_

#include <string>

namespace qprof::model {

// Expected number of distinct experts that B tokens touch when each picks k of E experts
// uniformly without replacement: each expert is missed by one token with probability
// 1 - k/E, by all B with (1 - k/E)^B. Grouped (tensor) MoE kernels read each touched
// expert's weights once per step; the slot-GEMV reads them B*k times. Returns 0 for
// E <= 0 or B <= 0; k is clamped to [0, E].
double ExpectedUniqueExperts(double experts, double topk, double tokens);

// Tokens a tensor-core tile pays for when `rows` tokens share one weight tile: rows
// rounded up to a multiple of `tile` (at least one tile when rows > 0). For fractional
// expected rows (grouped MoE) the rounding applies to the expectation: a documented
// approximation.
double PaddedRows(double rows, double tile);

struct AllReduceInputs {
  double message_bytes = 0;     // bytes each rank contributes (the tensor size)
  int ranks = 1;
  double link_gbps = 0;         // per GPU, per direction, 1e9 bytes/s
  double bus_efficiency = 1;    // fraction of link_gbps the bus bandwidth reaches
  double base_latency_ns = 0;
  double hop_latency_ns = 0;
};

// Nanoseconds for one ring all-reduce; 0 for a single rank. Requires link_gbps > 0 when
// ranks > 1 (returns +inf otherwise, which callers turn into an error).
double AllReduceTimeNs(const AllReduceInputs& in);

// The bus-bandwidth factor 2(n-1)/n of a ring all-reduce (0 for n <= 1).
double AllReduceBusFactor(int ranks);

// Bytes per ns (= GB/s) that `bytes_in_flight` outstanding at once sustain against a memory
// latency of `latency_ns`; +inf when either is not positive (no bound known).
double LatencyBoundBandwidthGbps(double bytes_in_flight, double latency_ns);

// Nanoseconds to issue `instructions` thread-instructions on `sms` SMs at `clock_mhz`: each
// SM issues one warp instruction per scheduler per clock, 4 x 32 thread-instructions
// (CUDA C++ Programming Guide: 4 warp schedulers per SM from compute capability 7.0 on).
double IssueTimeNs(double instructions, double sms, double clock_mhz);
inline constexpr double kIssueLanesPerSm = 4 * 32;

// Time of one launch, split by what limits it.
struct KernelTime {
  double memory_ns = 0;   // bytes / achievable bandwidth (latency-bound when the MLP bound binds)
  double simt_ns = 0;     // SIMT FLOPs (+ decode work) / effective SIMT rate
  double tensor_ns = 0;   // tensor FLOPs (padded) / effective tensor rate
  double comm_ns = 0;     // collectives
  double launch_ns = 0;
  double total_ns = 0;    // max(memory, simt, tensor, comm) + launch
  std::string bound;      // largest term: "memory", "latency" (memory at the MLP bound),
                          // "simt", "tensor", "comm"; "launch" if none
};

// Combines the terms: total = max of the four + launch; `bound` names the largest term
// ("launch" only when every term is zero; how much of a step is launch overhead is the
// summary's launch_share).
KernelTime CombineKernelTime(double memory_ns, double simt_ns, double tensor_ns,
                             double comm_ns, double launch_ns);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_FORMULAS_H_
