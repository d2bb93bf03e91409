// Test helper: a set of per-rank Kineto JSON traces made from one shared trace, the way a
// tensor-parallel job leaves one file per rank.
#ifndef QPROF_TESTS_AGGREGATE_RANK_FILES_H_
#define QPROF_TESTS_AGGREGATE_RANK_FILES_H_

#include <string>
#include <vector>

#include "proto/trace.pb.h"

namespace qprof::testing {

// ../shared/testdata or $QPROF_TESTDATA; "" when neither exists.
std::string SharedTestData();

// A fresh temporary folder for this test process.
std::string TempDir(const std::string& name);

// Writes rank0.json ... rank{n-1}.json into `dir`: the kernels, copies and sets of `source`,
// each rank's clock shifted by rank * 1 s, distributedInfo naming its rank. On rank `slow`
// every kernel that is not communication (name has no "nccl") runs `factor` times longer,
// and what follows on its stream starts that much later. Returns the paths in rank order.
std::vector<std::string> WriteRankSet(const proto::Trace& source, const std::string& dir,
                                      int ranks, int slow, double factor);

// Kernel time outside communication kernels of a trace, after the same slowing.
uint64_t ComputeNs(const proto::Trace& source, double factor);

}  // namespace qprof::testing

#endif  // QPROF_TESTS_AGGREGATE_RANK_FILES_H_
