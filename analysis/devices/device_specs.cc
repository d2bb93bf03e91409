#include "analysis/devices/device_specs.h"

#include <algorithm>
#include <cctype>

namespace qprof::devices {
namespace {

// Sources, written once and reused. Dense tensor rates are the vendor's sparse figure / 2
// where the datasheet quotes only "with sparsity".
constexpr char kH100Sheet[] =
    "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column; dense = sparse/2)";
constexpr char kH200Sheet[] =
    "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column; dense = sparse/2)";
constexpr char kHopperWp[] = "NVIDIA H100 (GH100) architecture whitepaper: 132 SMs on SXM5";
constexpr char kB200Sheet[] =
    "NVIDIA Blackwell Architecture Technical Brief, HGX B200 at 1000 W (dense: FP32 80, "
    "BF16 2250, FP8 4500, FP4 9000 TFLOPS) and NVIDIA DGX B200 datasheet (1,440 GB HBM3e "
    "and 64 TB/s for 8 GPUs: 180 GB and 8 TB/s each)";
constexpr char kB200Sms[] =
    "148 SMs (2 dies x 74 enabled) as the CUDA runtime reports them on a B200: Chips and "
    "Cheese, \"Nvidia's B200: Keeping the CUDA Juggernaut Rolling\"";
constexpr char kRtxPro6000Sheet[] =
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition datasheet (24,064 CUDA cores = 188 SMs "
    "x 128, 96 GB GDDR7, 1,792 GB/s, rounded here to 1,790) and NVIDIA RTX Blackwell GPU "
    "Architecture whitepaper, appendix (peak FP32 and tensor rates; dense = sparse/2)";
constexpr char kRtx5090Spec[] =
    "NVIDIA GeForce RTX 5090 specifications (170 SMs, 1792 GB/s, 104.8 TF FP32; tensor "
    "figures quoted sparse: FP16 838, FP8 1676, FP4 3352)";
constexpr char kRtx5090Acc[] =
    "NVIDIA RTX Blackwell GPU Architecture whitepaper, appendix (GeForce RTX 5090: FP16/BF16 "
    "tensor with FP32 accumulate 209.5 dense, FP8 with FP32 accumulate 419 dense; GeForce "
    "runs FP32 accumulation at half the FP16-accumulate rate)";
constexpr char kL40sSheet[] =
    "NVIDIA L40S datasheet (142 SMs/RT cores, 864 GB/s, 91.6 TF FP32, BF16 362 / FP8 733 "
    "dense; 733 / 1466 with sparsity)";
constexpr char kA100Sheet[] =
    "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM: 2039 GB/s, 19.5 TF FP32, "
    "BF16 312 dense, NVLink 600 GB/s)";
constexpr char kA100Wp[] = "NVIDIA A100 (GA100) architecture whitepaper: 108 SMs";
constexpr char kH200Measured[] =
    "device-to-device copy measured on an H200 SXM (4.3 TB/s, 0.90 of the 4.8 TB/s "
    "datasheet figure); no public document for it is cited yet and qprof has not re-measured "
    "it: treat it as an assumption";
constexpr char kNvlink4[] = "NVLink 4: 18 links x 50 GB/s = 900 GB/s total, 450 per direction";
constexpr char kNvlink5[] = "NVLink 5: 1.8 TB/s total per GPU, 900 per direction";
constexpr char kNvlink3[] = "NVLink 3: 12 links x 50 GB/s = 600 GB/s total, 300 per direction";
constexpr char kPcie5[] = "PCIe Gen5 x16: 32 GT/s x 16 lanes, 128b/130b = ~63 GB/s per direction";
constexpr char kPcie4[] = "PCIe Gen4 x16: 64 GB/s bidirectional per L40S datasheet = 32 per direction";
constexpr char kNoPath[] = "no such tensor path on this architecture";
constexpr char kLaunch[] =
    "assumed: a typical host-bound CUDA kernel launch (eager launches of short kernels are "
    "spaced 2-5 us apart: NVIDIA Technical Blog, \"Getting Started with CUDA Graphs\"); not "
    "measured on this device";

// Memory latency: pointer-chasing microbenchmarks put a global-memory load that misses L2 at
// roughly 470-540 SM cycles on Ampere, Ada and Hopper (Luo et al., "Benchmarking and
// Dissecting the Nvidia Hopper GPU Architecture", arXiv:2402.13499, A100 / RTX 4090 / H800).
// The table takes 500 cycles at each device's boost clock; Blackwell has no such published
// figure that we know of, so the same cycle count is assumed there. A lead, not measured.
constexpr double kLatencyCycles = 500;
constexpr char kLatency[] =
    "lead: ~500 SM cycles for a load that misses L2 (pointer chasing, Luo et al. "
    "arXiv:2402.13499: ~470-540 cycles on A100, RTX 4090, H800) at the boost clock; "
    "not measured on this device";
constexpr char kLatencyAssumed[] =
    "assumed: ~500 SM cycles as on Ampere/Ada/Hopper (Luo et al. arXiv:2402.13499), no "
    "published Blackwell figure known; at the boost clock; not measured";

Figure F(double v, const char* s) { return Figure{v, s}; }
Figure Latency(double clock_mhz, const char* s) { return Figure{kLatencyCycles / clock_mhz * 1000.0, s}; }

std::vector<DeviceSpec> BuildTable() {
  std::vector<DeviceSpec> t;
  {
    DeviceSpec d;
    d.name = "H100 SXM";
    d.key = "h100";
    d.aliases = {"h100-sxm", "h100 sxm5", "h100-80gb", "h100 80gb hbm3"};
    d.arch = "sm_90";
    d.sm_count = F(132, kHopperWp);
    d.memory_gb = F(80, kH100Sheet);
    d.memory_bandwidth_gbps = F(3350, kH100Sheet);
    d.fp32_simt_tflops = F(67, kH100Sheet);
    d.bf16_tensor_tflops = F(989, kH100Sheet);
    d.fp8_tensor_tflops = F(1979, kH100Sheet);
    d.fp4_tensor_tflops = F(0, kNoPath);
    d.interconnect = "NVLink 4";
    d.interconnect_gbps = F(450, kNvlink4);
    d.launch_overhead_us = F(3, kLaunch);
    d.boost_clock_mhz = F(1980, "NVIDIA H100 datasheet: max boost 1980 MHz (SXM)");
    d.memory_latency_ns = Latency(1980, kLatency);
    t.push_back(d);
  }
  {
    DeviceSpec d;
    d.name = "H200 SXM";
    d.key = "h200";
    d.aliases = {"h200-sxm", "h200 sxm5", "h200-141gb"};
    d.arch = "sm_90";
    d.sm_count = F(132, kHopperWp);
    d.memory_gb = F(141, kH200Sheet);
    d.memory_bandwidth_gbps = F(4800, kH200Sheet);
    d.measured_copy_gbps = F(4300, kH200Measured);
    d.fp32_simt_tflops = F(67, kH200Sheet);
    d.bf16_tensor_tflops = F(989, kH200Sheet);
    d.fp8_tensor_tflops = F(1979, kH200Sheet);
    d.fp4_tensor_tflops = F(0, kNoPath);
    d.interconnect = "NVLink 4";
    d.interconnect_gbps = F(450, kNvlink4);
    d.launch_overhead_us = F(3, kLaunch);
    d.boost_clock_mhz = F(1980, "NVIDIA H200 datasheet: max boost 1980 MHz (SXM, same GH100 die as H100)");
    d.memory_latency_ns = Latency(1980, kLatency);
    t.push_back(d);
  }
  {
    DeviceSpec d;
    d.name = "B200";
    d.key = "b200";
    d.aliases = {"b200-sxm", "hgx-b200", "dgx-b200"};
    d.arch = "sm_100";
    d.sm_count = F(148, kB200Sms);
    d.memory_gb = F(180, kB200Sheet);
    d.memory_bandwidth_gbps = F(8000, kB200Sheet);
    d.fp32_simt_tflops = F(80, kB200Sheet);
    d.bf16_tensor_tflops = F(2250, kB200Sheet);
    d.fp8_tensor_tflops = F(4500, kB200Sheet);
    d.fp4_tensor_tflops = F(9000, kB200Sheet);
    d.interconnect = "NVLink 5";
    d.interconnect_gbps = F(900, kNvlink5);
    d.launch_overhead_us = F(3, kLaunch);
    d.boost_clock_mhz = F(2110, "lead: derived from the table's 80 TF FP32 = 148 SMs x 128 FMA x 2 x 2.11 GHz; not a datasheet clock");
    d.memory_latency_ns = Latency(2110, kLatencyAssumed);
    t.push_back(d);
  }
  {
    DeviceSpec d;
    d.name = "RTX PRO 6000 Blackwell";
    d.key = "rtx-pro-6000";
    d.aliases = {"rtx pro 6000", "rtxpro6000", "rtx-pro-6000-blackwell", "pro6000"};
    d.arch = "sm_120";
    d.sm_count = F(188, kRtxPro6000Sheet);
    d.memory_gb = F(96, kRtxPro6000Sheet);
    d.memory_bandwidth_gbps = F(1790, kRtxPro6000Sheet);
    d.fp32_simt_tflops = F(126, kRtxPro6000Sheet);
    d.bf16_tensor_tflops = F(504, kRtxPro6000Sheet);
    d.fp8_tensor_tflops = F(1008, kRtxPro6000Sheet);
    d.fp4_tensor_tflops = F(2015, kRtxPro6000Sheet);
    d.interconnect = "PCIe Gen5 x16";
    d.interconnect_gbps = F(63, kPcie5);
    d.launch_overhead_us = F(3, kLaunch);
    d.boost_clock_mhz = F(2617, "NVIDIA RTX PRO 6000 Blackwell: boost 2617 MHz (126 TF FP32 = 188 SMs x 128 FMA x 2 x 2.617 GHz)");
    d.memory_latency_ns = Latency(2617, kLatencyAssumed);
    t.push_back(d);
  }
  {
    DeviceSpec d;
    d.name = "RTX 5090";
    d.key = "rtx-5090";
    d.aliases = {"rtx5090", "geforce rtx 5090", "5090"};
    d.arch = "sm_120";
    d.sm_count = F(170, kRtx5090Spec);
    d.memory_gb = F(32, kRtx5090Spec);
    d.memory_bandwidth_gbps = F(1792, kRtx5090Spec);
    d.fp32_simt_tflops = F(104.8, kRtx5090Spec);
    d.bf16_tensor_tflops = F(209.5, kRtx5090Acc);
    d.fp8_tensor_tflops = F(419, kRtx5090Acc);
    d.fp4_tensor_tflops = F(1676, kRtx5090Spec);
    d.interconnect = "PCIe Gen5 x16";
    d.interconnect_gbps = F(63, kPcie5);
    d.launch_overhead_us = F(3, kLaunch);
    d.boost_clock_mhz = F(2407, "NVIDIA GeForce RTX 5090 specifications: boost 2.41 GHz (104.8 TF = 170 SMs x 128 x 2 x 2.407 GHz)");
    d.memory_latency_ns = Latency(2407, kLatencyAssumed);
    t.push_back(d);
  }
  {
    DeviceSpec d;
    d.name = "L40S";
    d.key = "l40s";
    d.aliases = {"l40s-48gb"};
    d.arch = "sm_89";
    d.sm_count = F(142, kL40sSheet);
    d.memory_gb = F(48, kL40sSheet);
    d.memory_bandwidth_gbps = F(864, kL40sSheet);
    d.fp32_simt_tflops = F(91.6, kL40sSheet);
    d.bf16_tensor_tflops = F(362, kL40sSheet);
    d.fp8_tensor_tflops = F(733, kL40sSheet);
    d.fp4_tensor_tflops = F(0, kNoPath);
    d.interconnect = "PCIe Gen4 x16";
    d.interconnect_gbps = F(32, kPcie4);
    d.launch_overhead_us = F(3, kLaunch);
    d.boost_clock_mhz = F(2520, "NVIDIA L40S datasheet: boost 2520 MHz (91.6 TF = 142 SMs x 128 x 2 x 2.52 GHz)");
    d.memory_latency_ns = Latency(2520, kLatency);
    t.push_back(d);
  }
  {
    DeviceSpec d;
    d.name = "A100 SXM";
    d.key = "a100";
    d.aliases = {"a100-sxm", "a100-sxm4-80gb", "a100 80gb"};
    d.arch = "sm_80";
    d.sm_count = F(108, kA100Wp);
    d.memory_gb = F(80, kA100Sheet);
    d.memory_bandwidth_gbps = F(2039, kA100Sheet);
    d.fp32_simt_tflops = F(19.5, kA100Sheet);
    d.bf16_tensor_tflops = F(312, kA100Sheet);
    d.fp8_tensor_tflops = F(0, kNoPath);
    d.fp4_tensor_tflops = F(0, kNoPath);
    d.interconnect = "NVLink 3";
    d.interconnect_gbps = F(300, kNvlink3);
    d.launch_overhead_us = F(3, kLaunch);
    d.boost_clock_mhz = F(1410, "NVIDIA A100 whitepaper: boost 1410 MHz (19.5 TF = 108 SMs x 64 FMA x 2 x 1.41 GHz)");
    d.memory_latency_ns = Latency(1410, kLatency);
    t.push_back(d);
  }
  return t;
}

// Substrings of a normalised reported name that identify each device, and substrings
// that rule it out (a PCIe H100 has 2.0 TB/s, not 3.35).
struct Matcher {
  const char* key;
  const char* must_contain;
  std::vector<const char*> must_not_contain;
};

const std::vector<Matcher>& Matchers() {
  static const auto* m = new std::vector<Matcher>{
      {"h100", "h100", {"pcie", "nvl"}},
      {"h200", "h200", {"nvl"}},
      {"b200", "b200", {}},
      {"rtx-pro-6000", "rtxpro6000", {}},
      {"rtx-5090", "rtx5090", {}},
      {"l40s", "l40s", {}},
      {"a100", "a100", {"pcie", "40gb"}},
  };
  return *m;
}

}  // namespace

double DeviceSpec::EffectiveBandwidthGbps() const {
  return measured_copy_gbps.value > 0 ? measured_copy_gbps.value
                                      : memory_bandwidth_gbps.value;
}

std::string DeviceSpec::EffectiveBandwidthSource() const {
  return measured_copy_gbps.value > 0 ? measured_copy_gbps.source
                                      : memory_bandwidth_gbps.source;
}

double DeviceSpec::PipeTflops(std::string_view pipe) const {
  if (pipe == "simt_fp32") return fp32_simt_tflops.value;
  if (pipe == "tensor_bf16") return bf16_tensor_tflops.value;
  if (pipe == "tensor_fp8") return fp8_tensor_tflops.value;
  if (pipe == "tensor_fp4") return fp4_tensor_tflops.value;
  return 0;
}

const std::vector<DeviceSpec>& AllDevices() {
  static const auto* table = new std::vector<DeviceSpec>(BuildTable());
  return *table;
}

std::string NormaliseDeviceName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

const DeviceSpec* FindDevice(std::string_view name) {
  const std::string n = NormaliseDeviceName(name);
  if (n.empty()) return nullptr;
  const auto& all = AllDevices();
  // 1. Exact alias match.
  for (const DeviceSpec& d : all) {
    if (NormaliseDeviceName(d.key) == n || NormaliseDeviceName(d.name) == n) return &d;
    for (const std::string& a : d.aliases) {
      if (NormaliseDeviceName(a) == n) return &d;
    }
  }
  // 2. A reported name: "NVIDIA H200", "NVIDIA A100-SXM4-80GB", ...
  for (const Matcher& m : Matchers()) {
    if (n.find(m.must_contain) == std::string::npos) continue;
    bool excluded = std::any_of(m.must_not_contain.begin(), m.must_not_contain.end(),
                                [&](const char* x) { return n.find(x) != std::string::npos; });
    if (excluded) continue;
    for (const DeviceSpec& d : all) {
      if (d.key == m.key) return &d;
    }
  }
  return nullptr;
}

}  // namespace qprof::devices
