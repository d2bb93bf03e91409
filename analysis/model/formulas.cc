#include "analysis/model/formulas.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qprof::model {

double ExpectedUniqueExperts(double experts, double topk, double tokens) {
  if (experts <= 0 || tokens <= 0) return 0;
  double k = std::clamp(topk, 0.0, experts);
  return experts * (1.0 - std::pow(1.0 - k / experts, tokens));
}

double PaddedRows(double rows, double tile) {
  if (rows <= 0) return 0;
  if (tile <= 1) return rows;
  return std::ceil(rows / tile - 1e-9) * tile;
}

double AllReduceBusFactor(int ranks) {
  if (ranks <= 1) return 0;
  return 2.0 * (ranks - 1) / ranks;
}

double AllReduceTimeNs(const AllReduceInputs& in) {
  if (in.ranks <= 1) return 0;
  double rate = in.link_gbps * in.bus_efficiency;  // GB/s == bytes/ns
  if (!(rate > 0)) return std::numeric_limits<double>::infinity();
  double latency = in.base_latency_ns + 2.0 * (in.ranks - 1) * in.hop_latency_ns;
  return latency + AllReduceBusFactor(in.ranks) * in.message_bytes / rate;
}

double LatencyBoundBandwidthGbps(double bytes_in_flight, double latency_ns) {
  if (!(bytes_in_flight > 0) || !(latency_ns > 0)) return std::numeric_limits<double>::infinity();
  return bytes_in_flight / latency_ns;
}

double IssueTimeNs(double instructions, double sms, double clock_mhz) {
  if (instructions <= 0) return 0;
  const double per_ns = sms * kIssueLanesPerSm * clock_mhz / 1000.0;
  return per_ns > 0 ? instructions / per_ns : std::numeric_limits<double>::infinity();
}

KernelTime CombineKernelTime(double memory_ns, double simt_ns, double tensor_ns,
                             double comm_ns, double launch_ns) {
  KernelTime t;
  t.memory_ns = memory_ns;
  t.simt_ns = simt_ns;
  t.tensor_ns = tensor_ns;
  t.comm_ns = comm_ns;
  t.launch_ns = launch_ns;
  double body = std::max({memory_ns, simt_ns, tensor_ns, comm_ns});
  t.total_ns = body + launch_ns;
  // Ties go to the first in this order: memory, simt, tensor, comm.
  if (body <= 0) {
    t.bound = "launch";
  } else if (body == memory_ns) {
    t.bound = "memory";
  } else if (body == simt_ns) {
    t.bound = "simt";
  } else if (body == tensor_ns) {
    t.bound = "tensor";
  } else {
    t.bound = "comm";
  }
  return t;
}

}  // namespace qprof::model
