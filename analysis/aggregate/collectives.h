// Collectives and copies, accumulated per launch (accumulator.h calls these): one entry per
// collective type and process group, one per copy kind and memory pair, so the state grows
// with the distinct collectives and copy kinds, never with the launches.
//
// A collective launch (a kernel of a comm group) is described by, in order of trust:
//   type           Kineto's "Collective name" arg; else the kernel name (ncclKernel_AllReduce_*,
//                  ncclDevKernel_SendRecv, cross_device_reduce = vLLM's custom all-reduce,
//                  multimem_all_reduce = symmetric memory, DeepEP dispatch / combine); else
//                  the NCCL NVTX range open at the launch (ncclAllReduce; nsys traces of NCCL
//                  >= 2.19 name most kernels ncclDevKernel_Generic);
//   process group  Kineto's "Process Group Name" and "Process Group Description";
//   group size n   Kineto's "Group size"; else the run's tensor-parallel degree (our traces);
//   bytes S        NCCL's size of the whole buffer (nccl-tests doc/PERFORMANCE.md: for
//                  all-gather and reduce-scatter S = per-rank count x sizeof(type) x n):
//                  max(Kineto "In msg nelems", "Out msg nelems") x sizeof("dtype"), which is
//                  the total for all-gather (output) and reduce-scatter (input) alike; else
//                  the registry work model's comm_bytes (our runtime); else unknown, and the
//                  row says why.
// Bus bandwidth follows nccl-tests doc/PERFORMANCE.md ("Summary"): busbw = algbw x factor,
// all-reduce 2(n-1)/n, reduce-scatter, all-gather and all-to-all (n-1)/n, broadcast, reduce
// and point-to-point 1. DeepEP's dispatch and combine have no published factor: algbw only.
#ifndef QPROF_ANALYSIS_AGGREGATE_COLLECTIVES_H_
#define QPROF_ANALYSIS_AGGREGATE_COLLECTIVES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "proto/trace.pb.h"

namespace qprof::aggregate {

// (trace, device) pairs a row's launches ran on.
using DeviceRefs = std::set<std::pair<uint32_t, uint32_t>>;

struct CollectiveKey {
  std::string name;           // "all_reduce", ...
  std::string library;        // "NCCL", ...
  std::string process_group;  // "" unknown
  uint32_t group_size = 0;    // 0 unknown
  std::string group_size_source;
  auto Tie() const { return std::tie(name, library, process_group, group_size, group_size_source); }
  bool operator<(const CollectiveKey& o) const { return Tie() < o.Tie(); }
};

struct CollectiveAcc {
  uint64_t calls = 0, time_ns = 0;
  uint64_t graph_calls = 0, graph_time_ns = 0;
  uint64_t bytes = 0, calls_with_bytes = 0, time_with_bytes_ns = 0;
  std::string bytes_source;   // of the first launch with a size, else why there is none
  DeviceRefs devices;
  void Merge(const CollectiveAcc& o, uint32_t trace_offset);
};

struct CopyKey {
  std::string kind;    // "HtoD", "DtoH", "DtoD", "PtoP", "memset", ...
  std::string memory;  // "pageable -> device"; "" unknown
  bool operator<(const CopyKey& o) const { return std::tie(kind, memory) < std::tie(o.kind, o.memory); }
  bool operator==(const CopyKey& o) const { return kind == o.kind && memory == o.memory; }
};

struct CopyAcc {
  uint64_t calls = 0, bytes = 0, time_ns = 0, graph_calls = 0;
  DeviceRefs devices;
  void Merge(const CopyAcc& o, uint32_t trace_offset);
};

// One collective launch as the trace describes it.
struct CollectiveLaunch {
  CollectiveKey key;
  std::optional<uint64_t> bytes;
  std::string bytes_source;  // where `bytes` came from, or why it is unknown
};

// `normalised` is the kernel's normalised name; `header` the trace's (its run's tp).
CollectiveLaunch DescribeCollective(const proto::Activity& a, const std::string& normalised,
                                    const proto::TraceHeader& header);

// The collective type a name tells ("ncclKernel_AllReduce_RING_LL_Sum_float" -> "all_reduce",
// "allreduce" / "_allgather_base" / "ncclAllGather" -> ...), "" when it tells none.
std::string CollectiveTypeOfName(std::string_view name);
// "NCCL", "custom all-reduce", "symmetric memory", "DeepEP" or "other".
std::string CollectiveLibrary(std::string_view normalised);

// Bytes per element of a Kineto/PyTorch "dtype" (c10 ScalarType names: "Float" 4,
// "BFloat16" 2, "Long" 8, ...); 0 when unknown.
uint32_t DtypeBytes(std::string_view dtype);

// NCCL's bus-bandwidth factor for a collective of n ranks (nccl-tests doc/PERFORMANCE.md),
// with the formula in words; nullopt when it needs n and n is unknown, or the type has none.
// A symmetric-memory (multimem, NVLS) all-reduce reduces in the switch: "AllReduce
// (In-Network Reduction)", (n-1)/(n+1).
std::optional<double> BusBandwidthFactor(std::string_view type, std::string_view library,
                                         uint32_t n, std::string* formula);

// The copy row of a memcpy or memset activity.
CopyKey CopyKeyOf(const proto::Activity& a);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_COLLECTIVES_H_
