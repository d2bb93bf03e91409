#include "analysis/occupancy/device_limits.h"

#include "absl/strings/str_cat.h"

namespace qprof::occupancy {
namespace {

std::string ArchName(int major, int minor) { return absl::StrCat("sm_", major, minor); }

}  // namespace

// AMD GPUs schedule 64-wide wavefronts on compute units with their own VGPR, SGPR and LDS
// limits per SIMD and CU; the CUDA occupancy rules of analysis/devices/arch_limits do not
// describe them, and no AMD rules are written and tested here yet, so nothing is computed.
constexpr char kAmdNoOccupancy[] =
    "AMD GPU: occupancy follows AMD's rules (64-wide wavefronts; VGPR, SGPR and LDS limits per "
    "SIMD and compute unit), which qprof does not implement yet; NVIDIA's rules do not apply";

absl::StatusOr<DeviceLimits> DeviceLimitsForSpec(const devices::DeviceSpec& spec) {
  if (spec.vendor == "AMD") {
    return absl::FailedPreconditionError(absl::StrCat(spec.name, ": ", kAmdNoOccupancy));
  }
  int major = 0, minor = 0;
  if (!devices::ParseSmArch(spec.arch, &major, &minor)) {
    return absl::FailedPreconditionError(absl::StrCat(spec.name, ": architecture '", spec.arch,
                                                      "' is not an sm_XY name"));
  }
  const devices::ArchLimits* a = devices::FindArchLimits(major, minor);
  if (a == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("no occupancy rules for ", ArchName(major, minor)));
  }
  DeviceLimits d;
  d.arch = *a;
  d.sm_count = static_cast<int>(spec.sm_count.value);
  d.source = absl::StrCat("spec table ", spec.name, " (", spec.sm_count.value, " SMs: ",
                          spec.sm_count.source, "); ", ArchName(major, minor), " rules: ",
                          a->source);
  return d;
}

absl::StatusOr<DeviceLimits> DeviceLimitsFor(const proto::DeviceInfo& dev) {
  if (!dev.kind().empty() && dev.kind() != "gpu" && dev.kind() != "modelled") {
    return absl::FailedPreconditionError(absl::StrCat("device ", dev.id(), " (", dev.name(),
                                                      ") is not a GPU (", dev.kind(), ")"));
  }
  const devices::DeviceSpec* spec = devices::FindDevice(dev.name());
  if (dev.vendor() == "AMD" || (spec != nullptr && spec->vendor == "AMD")) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device ", dev.id(), " (", dev.name().empty() ? "unnamed" : dev.name(), "): ",
        kAmdNoOccupancy));
  }
  int major = static_cast<int>(dev.cc_major()), minor = static_cast<int>(dev.cc_minor());
  std::string cc_from = "the trace";
  if (major == 0 && !devices::ParseSmArch(dev.arch(), &major, &minor)) {
    if (spec == nullptr || !devices::ParseSmArch(spec->arch, &major, &minor)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "device ", dev.id(), " (", dev.name().empty() ? "unnamed" : dev.name(),
          "): compute capability unknown (not in the trace, name not in the spec table; "
          "analyze --device NAME supplies one)"));
    }
    cc_from = absl::StrCat("spec table ", spec->name);
  }
  const devices::ArchLimits* a = devices::FindArchLimits(major, minor);
  if (a == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("no occupancy rules for ", ArchName(major, minor)));
  }
  DeviceLimits d;
  d.arch = *a;
  // Sizes the trace reported replace the table's (they describe this very device).
  int reported = 0;
  auto set_int = [&reported](int* dst, uint64_t v) {
    if (v > 0) { *dst = static_cast<int>(v); ++reported; }
  };
  auto set_i64 = [&reported](int64_t* dst, uint64_t v) {
    if (v > 0) { *dst = static_cast<int64_t>(v); ++reported; }
  };
  set_int(&d.arch.max_threads_per_block, dev.max_threads_per_block());
  set_int(&d.arch.max_threads_per_sm, dev.max_threads_per_sm());
  if (dev.max_threads_per_sm() == 0 && dev.max_warps_per_sm() > 0) {
    d.arch.max_threads_per_sm = static_cast<int>(dev.max_warps_per_sm()) * d.arch.warp_size;
    ++reported;
  }
  set_int(&d.arch.regs_per_block, dev.regs_per_block());
  set_int(&d.arch.regs_per_sm, dev.regs_per_sm());
  set_int(&d.arch.warp_size, dev.warp_size());
  set_int(&d.arch.max_blocks_per_sm, dev.max_blocks_per_sm());
  set_i64(&d.arch.smem_per_block, dev.shared_mem_per_block());
  set_i64(&d.arch.smem_per_sm, dev.shared_mem_per_sm());
  set_i64(&d.arch.smem_per_block_optin, dev.shared_mem_per_block_optin());
  std::string sm_from;
  if (dev.sm_count() > 0) {
    d.sm_count = static_cast<int>(dev.sm_count());
    sm_from = "the trace";
  } else if (spec != nullptr && spec->sm_count.value > 0) {
    d.sm_count = static_cast<int>(spec->sm_count.value);
    sm_from = absl::StrCat("spec table ", spec->name, " (", spec->sm_count.source, ")");
  } else {
    return absl::FailedPreconditionError(absl::StrCat(
        "device ", dev.id(), " (", dev.name(), "): SM count unknown"));
  }
  const std::string by = dev.limits_source().empty() ? "the trace" : dev.limits_source();
  d.source = absl::StrCat(
      ArchName(major, minor), " (compute capability from ", cc_from, "); ",
      reported > 0 ? absl::StrCat(reported, " per-SM/per-block sizes from ", by, ", ")
                   : "sizes, ",
      "allocation rules from ", a->source, "; ", d.sm_count, " SMs from ", sm_from);
  return d;
}

}  // namespace qprof::occupancy
