#include "runtime/cuda/tp_ranks.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/cuda/cuda_status.h"
#include "runtime/cuda/device_collective.h"
#include "runtime/cuda/host_all_reduce.h"
#include "runtime/tp_partition.h"

namespace qprof::runtime::cuda {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct TpRanks::Comms {
  std::unique_ptr<DeviceCollective> device;  // NCCL
  std::unique_ptr<HostAllReduce> host;       // QPROF_TP_ALLREDUCE=host
};

int VisibleCudaDevices() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

TpRanks::TpRanks() = default;

TpRanks::~TpRanks() {
  if (group_ != nullptr && group_->wedged()) {
    // A rank thread never came back and may still use its decoder, weights or
    // communicator: leave them allocated (the process is about to report and exit).
    // (Moving the vector keeps its elements, which the decoders reference, in place.)
    for (auto& d : decoders_) d.release();
    new std::vector<ModelWeights>(std::move(slices_));
    comms_.release();
    group_.release();
    return;
  }
  decoders_.clear();  // device memory before the communicators go
  models_.clear();
  comms_.reset();
  group_.reset();
}

std::string TpRanks::all_reduce_name() const {
  if (comms_ == nullptr) return "";
  if (comms_->host != nullptr) return "host (QPROF_TP_ALLREDUCE=host)";
  return comms_->device != nullptr ? comms_->device->name() : "";
}

CudaDecoderOptions TpRanks::RankOptions(const CudaDecoderOptions& options, int r) const {
  CudaDecoderOptions o = options;
  o.device = devices_[r];
  o.model = r < static_cast<int>(models_.size()) ? models_[r] : nullptr;
  if (tp_ == 1) {
    o.tp = TpSlice{};
    o.tp.tp = 1;
    return o;
  }
  o.tp = slice_[r];
  Comms* comms = comms_.get();
  if (comms->host != nullptr) {
    o.all_reduce_capturable = false;
    o.all_reduce = [comms, r](float* buf, size_t n, void* stream, const PollFn& poll) {
      return comms->host->Run(r, buf, n, static_cast<cudaStream_t>(stream), poll);
    };
  } else {
    o.all_reduce = [comms, r](float* buf, size_t n, void* stream, const PollFn&) {
      return comms->device->AllReduceSum(r, buf, n, stream);
    };
  }
  return o;
}

absl::Status TpRanks::CreateDecoders(const CudaDecoderOptions& options) {
  decoders_.clear();
  decoders_.resize(tp_);
  const bool first = models_.empty();
  if (tp_ == 1) {
    ASSIGN_OR_RETURN(decoders_[0], CudaDecoder::Create(*full_, RankOptions(options, 0)));
    if (first) {
      models_.push_back(decoders_[0]->model());
      upload_ns_ = decoders_[0]->upload_ns();
    }
    caches_ns_ = decoders_[0]->caches_ns();
    return absl::OkStatus();
  }
  // Each rank uploads its slice from its own thread (GPUs in parallel).
  std::vector<CudaDecoderOptions> opts;
  for (int r = 0; r < tp_; ++r) opts.push_back(RankOptions(options, r));
  const int64_t t0 = NowNs();
  RETURN_IF_ERROR(group_->Run("setup", [&](int r, RankGroup::Waiter&) -> absl::Status {
    QPROF_CUDA_RETURN_IF_ERROR(cudaSetDevice(devices_[r]));
    ASSIGN_OR_RETURN(decoders_[r], CudaDecoder::Create(slices_[r], opts[r]));
    return absl::OkStatus();
  }, std::chrono::minutes(30)));  // uploads and caches, not a step: no step timeout
  const int64_t t1 = NowNs();
  caches_ns_ = 0;
  for (const auto& d : decoders_) caches_ns_ = std::max(caches_ns_, d->caches_ns());
  if (first) {
    upload_ns_ = t1 - t0 - caches_ns_;
    for (const auto& d : decoders_) models_.push_back(d->model());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TpRanks>> TpRanks::Create(const ModelWeights& full,
                                                         const CudaDecoderOptions& options,
                                                         const TpOptions& tp) {
  RETURN_IF_ERROR(ValidateTensorParallel(full.arch, tp.tp));
  auto ranks = std::unique_ptr<TpRanks>(new TpRanks());
  TpRanks& t = *ranks;
  t.full_ = &full;
  t.tp_ = tp.tp;
  t.options_ = tp;
  const int visible = VisibleCudaDevices();
  if (tp.env.devices.empty()) {
    if (tp.tp > 1) RETURN_IF_ERROR(CheckTpDevices(tp.tp, visible));
    for (int r = 0; r < tp.tp; ++r) t.devices_.push_back(tp.tp == 1 ? options.device : r);
  } else {
    for (int d : tp.env.devices) {
      if (d >= visible) {
        return absl::FailedPreconditionError(absl::StrCat(
            "QPROF_TP_DEVICES names GPU ", d, ", found ", visible, " GPU(s)"));
      }
    }
    t.devices_ = tp.env.devices;
  }
  if (tp.tp == 1) {
    RETURN_IF_ERROR(t.CreateDecoders(options));
    return ranks;
  }
  t.comms_ = std::make_unique<Comms>();
  if (tp.env.host_all_reduce) {
    t.comms_->host = std::make_unique<HostAllReduce>(tp.tp);
  } else {
    ASSIGN_OR_RETURN(t.comms_->device, OpenDeviceCollective(t.devices_));
  }
  RankGroupOptions go;
  go.step_timeout = std::chrono::milliseconds(tp.env.timeout_ms);
  t.group_ = std::make_unique<RankGroup>(tp.tp, go);
  Comms* comms = t.comms_.get();
  TpRanks* self = &t;
  for (int r = 0; r < tp.tp; ++r) {
    RankGroup::RankHooks hooks;
    hooks.async_error = [self, comms, r]() -> absl::Status {
      if (self->options_.env.fault.Fires(TpFault::Kind::kAsync, r, self->current_step_.load())) {
        return absl::InternalError(absl::StrCat("injected asynchronous error (QPROF_TP_FAULT=",
                                                self->options_.env.fault.spec, ")"));
      }
      if (comms->device != nullptr) return comms->device->AsyncError(r);
      return absl::OkStatus();
    };
    hooks.abort = [comms, r] {
      if (comms->device != nullptr) comms->device->Abort(r);
      if (comms->host != nullptr) comms->host->Abort();
    };
    t.group_->SetHooks(r, std::move(hooks));
  }
  const int moe_granule = MoeInterGranule(options.choice.moe_id);
  t.slices_.reserve(tp.tp);  // decoders keep references: no reallocation
  for (int r = 0; r < tp.tp; ++r) {
    ASSIGN_OR_RETURN(TpSlice slice, MakeTpSlice(full.arch, full.format, tp.tp, r, moe_granule));
    ASSIGN_OR_RETURN(ModelWeights w, SliceWeights(full, slice));
    t.slice_.push_back(slice);
    t.slices_.push_back(std::move(w));
  }
  RETURN_IF_ERROR(t.CreateDecoders(options));
  return ranks;
}

absl::Status TpRanks::NewBatch(const CudaDecoderOptions& options) {
  if (group_ != nullptr && (group_->aborted() || group_->wedged())) {
    return absl::FailedPreconditionError("tensor-parallel ranks were aborted; start a new run");
  }
  return CreateDecoders(options);
}

absl::Status TpRanks::Step(int step, const std::vector<int32_t>& tokens,
                           std::vector<int32_t>* next, std::vector<float>* logits) {
  if (tp_ == 1) return decoders_[0]->Step(step, tokens, logits, next);
  current_step_.store(step);
  std::vector<std::vector<int32_t>> out(tp_);
  const TpFault& fault = options_.env.fault;
  RETURN_IF_ERROR(group_->Run(
      absl::StrCat("step ", step), [&](int r, RankGroup::Waiter& w) -> absl::Status {
        if (fault.Fires(TpFault::Kind::kFail, r, step)) {
          return absl::InternalError(
              absl::StrCat("injected fault (QPROF_TP_FAULT=", fault.spec, ")"));
        }
        if (fault.Fires(TpFault::Kind::kHang, r, step)) {  // launch nothing, report nothing
          for (;;) {
            RETURN_IF_ERROR(w.Poll());
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        }
        nvtxRangePushA("decode");  // NVTX ranges are per thread: each rank opens its own
        const PollFn poll = [&w] { return w.Poll(); };
        absl::Status s = decoders_[r]->Step(step, tokens, r == 0 ? logits : nullptr, &out[r], poll);
        nvtxRangePop();
        return s;
      }));
  for (int r = 1; r < tp_; ++r) {
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
  // Ranks sharing a GPU share nothing else: every rank's weights count.
  return b;
}

size_t TpRanks::cache_bytes() const {
  size_t b = 0;
  for (const auto& d : decoders_) b += d->cache_bytes();
  return b;
}

}  // namespace qprof::runtime::cuda
