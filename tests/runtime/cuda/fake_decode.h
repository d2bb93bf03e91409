// Test helper: the CUDA decoder's decode loop played on the scripted fake GPU behind the
// CUPTI collector's seam, as CudaDecoder::Step runs it: every kernel of each step's launch
// list (CudaDecoder::LaunchList, made without a GPU) under the NVTX ranges the decoder
// pushes. With `graph`, as with --cuda-graph: step 0 eager, step 1 captured (its ranges
// pushed while capturing, as StepRanges does) and replayed under "decode/step N/graph"
// like every later step; `chain` then gets the captured nodes (CaptureStep's
// CudaGraphInfo.chain).
#ifndef QPROF_TESTS_RUNTIME_CUDA_FAKE_DECODE_H_
#define QPROF_TESTS_RUNTIME_CUDA_FAKE_DECODE_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/decode_loop.h"
#include "runtime/plan.h"
#include "runtime/run.h"
#include "tests/profiler/cupti/fake/fake_cupti.h"

namespace qprof::runtime::cuda::testing {

inline constexpr uint64_t kDecodeTid = 5;

inline RunOptions FakeDecodeWorkload() {
  RunOptions o;
  o.model = "tiny";
  o.format = "nvfp4";
  o.moe_backend = "slot_gemv";
  o.batch = 3;
  o.steps = 3;
  o.context = 40;
  o.threads = 2;
  return o;
}

inline CudaDecoderOptions FakeDecodeOptions(const RunOptions& o) {
  CudaDecoderOptions d;
  d.context_lengths = ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.choice = *ChooseKernels(o);
  d.seed = o.seed;
  return d;
}

// Kernel durations follow their work at ~3 TB/s so the achieved rates are plausible.
inline void PlayFakeDecode(const RunOptions& o, const ModelWeights& weights,
                           profiler::cupti::fake::FakeCupti& gpu, DecodeLoop* loop,
                           bool graph = false, std::vector<CapturedNode>* chain = nullptr) {
  const CudaDecoderOptions dopt = FakeDecodeOptions(o);
  CUcontext ctx = gpu.CreateContext(0);
  uint64_t exec = 0;
  gpu.NvtxPush(kDecodeTid, "decode");
  for (int s = 0; s < o.steps; ++s) {
    gpu.NvtxPush(kDecodeTid, absl::StrCat("step ", s));
    const bool eager = !graph || s == 0;
    if (eager || s == 1) {
      auto list = CudaDecoder::LaunchList(weights.arch, weights.format, weights.layers, dopt, s,
                                          132);
      ASSERT_TRUE(list.ok()) << list.status();
      if (!eager) gpu.BeginCapture(ctx, 7, kDecodeTid);
      std::string open;
      for (const StepKernels& c : *list) {
        SwitchRange(open, c.launch.range, [&](const std::string& n) { gpu.NvtxPush(kDecodeTid, n); },
                    [&] { gpu.NvtxPop(kDecodeTid); });
        open = c.launch.range;
        for (const kernels::CudaLaunch* k : c.kernels) {
          const double bytes = k->work(c.launch.shape).bytes();
          gpu.LaunchKernel(ctx, 7, k->name, 2000 + static_cast<uint64_t>(bytes / 3000.0),
                           kDecodeTid);
          if (!eager && chain != nullptr) {
            CapturedNode n;
            n.kind = CapturedNode::Kind::kKernel;
            n.name = k->name;
            n.path = c.launch.range;
            chain->push_back(n);
          }
        }
      }
      SwitchRange(open, "", [](const std::string&) {}, [&] { gpu.NvtxPop(kDecodeTid); });
      if (!eager) exec = gpu.Instantiate(ctx, gpu.EndCapture(ctx, 7, kDecodeTid), kDecodeTid);
    }
    if (!eager) {
      gpu.NvtxPush(kDecodeTid, "graph");
      gpu.LaunchGraph(ctx, 7, exec, kDecodeTid);
      gpu.NvtxPop(kDecodeTid);
    }
    gpu.NvtxPop(kDecodeTid);
    loop->step_ns.push_back(1'000'000 + 10'000 * s);
    loop->tokens.push_back(std::vector<int32_t>(o.batch, 7 + s));
  }
  gpu.NvtxPop(kDecodeTid);
  gpu.SyncAll();
}

}  // namespace qprof::runtime::cuda::testing

#endif  // QPROF_TESTS_RUNTIME_CUDA_FAKE_DECODE_H_
