#include "analysis/devices/arch_limits.h"

#include <cctype>

namespace qprof::devices {
namespace {

constexpr char kGuide[] =
    "CUDA C++ Programming Guide (CUDA 13.0), Technical Specifications per Compute "
    "Capability and the shared-memory capacities of each architecture's section; "
    "cross-checked with cuda_occupancy.h of CUDA 13.0 (tests/analysis/occupancy)";

ArchLimits Row(int major, int minor, int threads_per_sm, int blocks_per_sm,
               int64_t smem_per_sm_kib, int64_t optin_kib, std::vector<int> carveouts) {
  ArchLimits a;
  a.cc_major = major;
  a.cc_minor = minor;
  a.max_threads_per_sm = threads_per_sm;
  a.max_blocks_per_sm = blocks_per_sm;
  a.smem_per_sm = smem_per_sm_kib * 1024;
  a.smem_per_block_optin = optin_kib * 1024;
  a.smem_carveouts_kib = std::move(carveouts);
  // Volta and Turing allocate shared memory in 256-byte units and reserve nothing per
  // block; from Ampere on the unit is 128 bytes and the driver reserves 1 KiB per block
  // (cudaDeviceProp::reservedSharedMemPerBlock).
  a.smem_alloc_unit = major >= 8 ? 128 : 256;
  a.reserved_smem_per_block = major >= 8 ? 1024 : 0;
  a.source = kGuide;
  return a;
}

std::vector<ArchLimits> Build() {
  const std::vector<int> volta = {0, 8, 16, 32, 64, 96};
  const std::vector<int> ga100 = {0, 8, 16, 32, 64, 100, 132, 164};
  const std::vector<int> ga10x = {0, 8, 16, 32, 64, 100};
  const std::vector<int> hopper = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  return {
      Row(7, 0, 2048, 32, 96, 96, volta),     // V100
      Row(7, 2, 2048, 32, 96, 96, volta),     // Xavier
      Row(7, 5, 1024, 16, 64, 64, {32, 64}),  // Turing
      Row(8, 0, 2048, 32, 164, 163, ga100),   // A100
      Row(8, 6, 1536, 16, 100, 99, ga10x),    // GA10x
      Row(8, 7, 1536, 16, 164, 163, ga100),   // Orin
      Row(8, 9, 1536, 24, 100, 99, ga10x),    // Ada (L40S)
      Row(9, 0, 2048, 32, 228, 227, hopper),  // H100, H200
      Row(10, 0, 2048, 32, 228, 227, hopper), // B200
      Row(10, 3, 2048, 32, 228, 227, hopper), // B300
      Row(12, 0, 1536, 24, 100, 99, ga10x),   // RTX PRO 6000, RTX 5090
      Row(12, 1, 1536, 24, 100, 99, ga10x),   // DGX Spark
  };
}

}  // namespace

const std::vector<ArchLimits>& AllArchLimits() {
  static const auto* table = new std::vector<ArchLimits>(Build());
  return *table;
}

const ArchLimits* FindArchLimits(int cc_major, int cc_minor) {
  for (const ArchLimits& a : AllArchLimits()) {
    if (a.cc_major == cc_major && a.cc_minor == cc_minor) return &a;
  }
  return nullptr;
}

bool ParseSmArch(const std::string& arch, int* cc_major, int* cc_minor) {
  if (arch.rfind("sm_", 0) != 0) return false;
  size_t i = 3, j = i;
  while (j < arch.size() && std::isdigit(static_cast<unsigned char>(arch[j]))) ++j;
  if (j - i < 2 || j - i > 3) return false;  // "90", "120"
  const std::string digits = arch.substr(i, j - i);
  *cc_major = std::stoi(digits.substr(0, digits.size() - 1));
  *cc_minor = digits.back() - '0';
  return true;
}

}  // namespace qprof::devices
