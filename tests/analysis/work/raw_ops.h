// A plain oracle for the work of kernels in real Kineto traces: the raw JSON parsed with
// simdjson's DOM (not the importer), each kernel joined to its launch call by correlation id
// and to the innermost cpu_op enclosing that call on its thread, and the op's FLOPs and
// bytes computed from its raw "Input Dims", "Input type" and "Concrete Inputs" with the
// conventions of analysis/work/op_work.h written out again here, independently.
#ifndef QPROF_TESTS_ANALYSIS_WORK_RAW_OPS_H_
#define QPROF_TESTS_ANALYSIS_WORK_RAW_OPS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace qprof::testing_work {

struct RawArg {
  std::vector<int64_t> dims;  // one tensor's sizes (empty: scalar, None or 0-dim)
  bool list = false;          // a TensorList
  std::vector<std::vector<int64_t>> list_dims;
  std::string type;
  std::string value;
};

struct RawOp {
  std::string name;
  int64_t pid = 0, tid = 0;
  double ts = 0, dur = 0;     // microseconds
  bool has_shapes = false;
  bool has_values = false;    // "Concrete Inputs" recorded
  std::vector<RawArg> args;
};

struct RawKernel {
  std::string name;
  double dur_us = 0;
  const RawOp* op = nullptr;  // innermost enclosing cpu_op of its launch call
  bool graph = false;         // launched by a CUDA-graph launch
};

struct OracleWork {
  bool has = false;
  double flops = 0, bytes = 0;
  bool bytes_known = true;
};

struct RawOps {
  std::vector<RawOp> ops;  // stable addresses after Read
  std::vector<RawKernel> kernels;
};

// Reads a .json or .json.gz Kineto trace.
RawOps ReadRawOps(const std::string& path);

// The work of one call of `op` by the conventions (has = false: no rule or no shapes);
// `kernel` (a name it launched) gives a tensor list's element size when it says
// ("OpaqueType<2u>": 2 bytes).
OracleWork OpWorkOracle(const RawOp& op, const std::string& kernel);

}  // namespace qprof::testing_work

#endif  // QPROF_TESTS_ANALYSIS_WORK_RAW_OPS_H_
