#include "runtime/cuda/tp_ranks.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/tp_partition.h"
#if QPROF_HAVE_NCCL
#include "runtime/cuda/tp_ops.h"
#endif

namespace qprof::runtime {

#if QPROF_HAVE_NCCL
struct TpRanks::Comms {
  std::unique_ptr<NcclComms> nccl;
};
#else
struct TpRanks::Comms {};
#endif

#if QPROF_HAVE_NCCL
namespace {

// Granule of the expert intermediate width each CUDA MoE path takes (the rule of
// kernels::cuda::CheckMoeCuda; CudaDecoder::Create probes the real check, so a drift here
// becomes a clear error, not a wrong result).
int MoeInterMultiple(const std::string& moe_backend) {
  if (moe_backend == "w4a16_mma") return 256;
  if (moe_backend == "fp4_mma") return 128;
  return 32;  // slot_gemv
}

}  // namespace
#endif

int VisibleCudaDevices() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

TpRanks::TpRanks() = default;
TpRanks::~TpRanks() {
  decoders_.clear();  // free device memory before the communicators go
  comms_.reset();
}

absl::StatusOr<std::unique_ptr<TpRanks>> TpRanks::Create(const ModelWeights& full,
                                                         const CudaDecoderOptions& options,
                                                         int tp) {
  RETURN_IF_ERROR(ValidateTensorParallel(full.config, tp));
  auto ranks = std::unique_ptr<TpRanks>(new TpRanks());
  if (tp == 1) {
    CudaDecoderOptions o = options;
    o.tp = TpSlice{};
    o.tp.tp = 1;
    ASSIGN_OR_RETURN(auto d, CudaDecoder::Create(full, o));
    ranks->decoders_.push_back(std::move(d));
    return ranks;
  }
  RETURN_IF_ERROR(CheckTpDevices(tp, VisibleCudaDevices()));
#if QPROF_HAVE_NCCL
  ranks->comms_ = std::make_unique<Comms>();
  ASSIGN_OR_RETURN(ranks->comms_->nccl, NcclComms::Create(tp));
  ranks->slices_.reserve(tp);  // decoders keep references: no reallocation
  for (int r = 0; r < tp; ++r) {
    ASSIGN_OR_RETURN(TpSlice slice, MakeTpSlice(full.config, full.format, tp, r,
                                                   MoeInterMultiple(options.moe_backend)));
    ASSIGN_OR_RETURN(ModelWeights w, SliceWeights(full, slice));
    ranks->slices_.push_back(std::move(w));
    CudaDecoderOptions o = options;
    o.tp = slice;
    o.device = r;
    o.nccl_comm = ranks->comms_->nccl->comm(r);
    auto d = CudaDecoder::Create(ranks->slices_.back(), o);
    if (!d.ok()) {
      return absl::Status(d.status().code(),
                          absl::StrCat("tp rank ", r, ": ", d.status().message()));
    }
    ranks->decoders_.push_back(*std::move(d));
  }
  return ranks;
#else
  return absl::UnimplementedError(
      absl::StrCat("--tp ", tp, " needs NCCL, and this build has none (nccl.h and libnccl "
                   "were not found at configure time)"));
#endif
}

absl::Status TpRanks::Step(int step, const std::vector<int32_t>& tokens,
                           std::vector<int32_t>* next) {
  std::vector<float> logits;
  if (decoders_.size() == 1) return decoders_[0]->Step(step, tokens, &logits, next);
  const int n = tp();
  std::vector<absl::Status> status(n);
  std::vector<std::vector<int32_t>> out(n);
  std::atomic<int> done{0}, failed{0};
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      // Rank 0 copies its logits like a tp 1 run (same host work per step); the others
      // skip the [B, vocab] copy nobody reads.
      std::vector<float> rank_logits;
      nvtxRangePushA("decode");  // NVTX ranges are per thread: each rank opens its own
      status[r] = decoders_[r]->Step(step, tokens, r == 0 ? &rank_logits : nullptr, &out[r]);
      nvtxRangePop();
      if (!status[r].ok()) failed.fetch_add(1);
      done.fetch_add(1);
    });
  }
  // A failed rank never reaches its all-reduce, so its peers would wait forever: give the
  // others a grace period, then abort the communicators (the run ends with the error).
  bool aborted = false;
  auto first_failure = std::chrono::steady_clock::time_point::max();
  while (done.load() < n) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (failed.load() > 0 && !aborted) {
      const auto now = std::chrono::steady_clock::now();
      if (first_failure == std::chrono::steady_clock::time_point::max()) first_failure = now;
      if (now - first_failure > std::chrono::seconds(10)) {
#if QPROF_HAVE_NCCL
        comms_->nccl->Abort();
#endif
        aborted = true;
      }
    }
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    if (!status[r].ok()) {
      return absl::Status(status[r].code(),
                          absl::StrCat("tp rank ", r, ": ", status[r].message(),
                                       aborted ? " (NCCL communicators aborted)" : ""));
    }
  }
  for (int r = 1; r < n; ++r) {
    if (out[r] != out[0]) {
      ++mismatch_steps_;
      break;
    }
  }
  *next = std::move(out[0]);
  return absl::OkStatus();
}

size_t TpRanks::device_bytes() const {
  size_t b = 0;
  for (const auto& d : decoders_) b += d->device_bytes();
  return b;
}

size_t TpRanks::cache_bytes() const {
  size_t b = 0;
  for (const auto& d : decoders_) b += d->cache_bytes();
  return b;
}

}  // namespace qprof::runtime
