#include "runtime/cuda/nccl_comms.h"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runtime/cuda/device_collective.h"
#include "runtime/cuda/host/nccl_search.h"

#ifndef QPROF_NCCL_BUILD_DIR
#define QPROF_NCCL_BUILD_DIR ""
#endif

namespace qprof::runtime::cuda {
namespace {

template <typename F>
bool Sym(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  return *out != nullptr;
}

absl::StatusOr<NcclApi> Open() {
  const std::vector<std::string> candidates =
      NcclLibraryCandidates(std::getenv("QPROF_NCCL_LIBRARY"), QPROF_NCCL_BUILD_DIR,
                            std::getenv("VIRTUAL_ENV"));
  std::vector<std::string> tried;
  for (const std::string& path : candidates) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      tried.push_back(absl::StrCat(path, " (", e != nullptr ? e : "not loadable", ")"));
      continue;
    }
    NcclApi api;
    ncclResult_t (*get_version)(int*) = nullptr;
    if (!Sym(h, "ncclCommInitAll", &api.comm_init_all) ||
        !Sym(h, "ncclCommDestroy", &api.comm_destroy) ||
        !Sym(h, "ncclCommAbort", &api.comm_abort) ||
        !Sym(h, "ncclCommGetAsyncError", &api.comm_get_async_error) ||
        !Sym(h, "ncclAllReduce", &api.all_reduce) ||
        !Sym(h, "ncclGetErrorString", &api.get_error_string) ||
        !Sym(h, "ncclGetVersion", &get_version)) {
      tried.push_back(absl::StrCat(path, " (lacks an NCCL entry point)"));
      dlclose(h);
      continue;
    }
    get_version(&api.version);
    api.path = path;
    return api;  // the handle stays open for the life of the process
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "--tp > 1 needs NCCL (libnccl.so.2) and none could be loaded; tried ",
      absl::StrJoin(tried, ", "), ". Set QPROF_NCCL_LIBRARY=/path/to/libnccl.so.2"));
}

}  // namespace

absl::StatusOr<const NcclApi*> LoadNccl() {
  // Loaded once per process: the library is process-wide by nature, and a function-local
  // static is initialized exactly once even when rank threads race here.
  static const absl::StatusOr<NcclApi>* const loaded = new absl::StatusOr<NcclApi>(Open());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

absl::Status NcclStatus(const NcclApi& api, ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", api.get_error_string(r));
  if (r == ncclSystemError || r == ncclInvalidUsage || r == ncclInvalidArgument) {
    return absl::FailedPreconditionError(msg);
  }
  return absl::InternalError(msg);
}

absl::StatusOr<std::unique_ptr<NcclComms>> NcclComms::Create(const NcclApi* api,
                                                             const std::vector<int>& devices) {
  auto c = std::unique_ptr<NcclComms>(new NcclComms());
  c->api_ = api;
  c->devices_ = devices;
  c->comms_.assign(devices.size(), nullptr);
  absl::Status s = NcclStatus(
      *api, api->comm_init_all(c->comms_.data(), static_cast<int>(devices.size()), devices.data()),
      "ncclCommInitAll");
  if (!s.ok()) {
    c->comms_.clear();  // nothing to destroy after a failed init
    return s;
  }
  return c;
}

NcclComms::~NcclComms() {
  for (size_t r = 0; r < comms_.size(); ++r) {
    if (comms_[r] == nullptr) continue;
    cudaSetDevice(devices_[r]);
    api_->comm_destroy(comms_[r]);
  }
}

absl::Status NcclComms::AllReduceSum(int rank, float* buf, size_t n, cudaStream_t stream) {
  if (comms_[rank] == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("NCCL communicator of rank ", rank,
                                                      " was aborted"));
  }
  return NcclStatus(*api_, api_->all_reduce(buf, buf, n, ncclFloat32, ncclSum, comms_[rank], stream),
                    "ncclAllReduce");
}

absl::Status NcclComms::AsyncError(int rank) {
  if (comms_[rank] == nullptr) return absl::OkStatus();
  ncclResult_t async = ncclSuccess;
  absl::Status s = NcclStatus(*api_, api_->comm_get_async_error(comms_[rank], &async),
                              "ncclCommGetAsyncError");
  if (!s.ok()) return s;
  return NcclStatus(*api_, async, "NCCL asynchronous error");
}

void NcclComms::Abort(int rank) {
  if (comms_[rank] == nullptr) return;
  api_->comm_abort(comms_[rank]);
  comms_[rank] = nullptr;
}

namespace {

class NcclCollective : public DeviceCollective {
 public:
  NcclCollective(const NcclApi* api, std::unique_ptr<NcclComms> comms)
      : api_(api), comms_(std::move(comms)) {}
  std::string name() const override {
    return absl::StrCat("NCCL ", api_->version, " (", api_->path, ")");
  }
  absl::Status AllReduceSum(int rank, float* buf, size_t n, void* stream) override {
    return comms_->AllReduceSum(rank, buf, n, static_cast<cudaStream_t>(stream));
  }
  absl::Status AsyncError(int rank) override { return comms_->AsyncError(rank); }
  void Abort(int rank) override { comms_->Abort(rank); }

 private:
  const NcclApi* api_;
  std::unique_ptr<NcclComms> comms_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceCollective>> OpenDeviceCollective(
    const std::vector<int>& devices) {
  // Connect the ranks inside ncclCommInitAll (one call for all ranks, from this thread)
  // rather than lazily inside the first all-reduce, where a rank whose peer died would
  // block in a host call that never polls. A value the user set is kept.
  setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);
  ASSIGN_OR_RETURN(const NcclApi* api, LoadNccl());
  ASSIGN_OR_RETURN(std::unique_ptr<NcclComms> comms, NcclComms::Create(api, devices));
  return std::unique_ptr<DeviceCollective>(new NcclCollective(api, std::move(comms)));
}

}  // namespace qprof::runtime::cuda
