#include "tests/reports/fixtures.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace qprof::testing {
namespace {

struct K {
  const char* name;
  const char* role;
  const char* cls;
  const char* format;
  const char* evidence;
  const char* detail;
  double step_ms;       // time per decode step
  int calls_per_step;
  double tensor_pct;    // used when metrics are on
  // Work per call (0: the row has none) and the roof its FLOPs are measured against.
  double flops_per_call = 0;
  double bytes_per_call = 0;
  const char* roof_pipe = "";
};

// The fixture device's roofs (RTX PRO 6000 Blackwell datasheet figures, dense).
struct FixtureRoof {
  const char* pipe;
  double tflops;
};
constexpr double kFixtureBandwidthGbps = 1790;
constexpr FixtureRoof kFixtureRoofs[] = {
    {"simt_fp32", 126}, {"tensor_tf32", 252}, {"tensor_bf16", 504}, {"tensor_fp16", 504},
    {"tensor_fp8", 1008}, {"tensor_fp4", 2015}};

double FixtureRoofTflops(const std::string& pipe) {
  for (const FixtureRoof& r : kFixtureRoofs) {
    if (pipe == r.pipe) return r.tflops;
  }
  return 0;
}

// Per-step kernel time of the MXFP4 run: 39% slot GEMV + 38% sparse MLA, both SIMT.
std::vector<K> KernelsFor(const std::string& format) {
  const bool mx = format == "mxfp4";
  std::vector<K> ks = {
      {"attn::sparse_mla_decode_simt<64, 512, __nv_bfloat16>", "attn.sparse_mla", "simt",
       "bf16", "registry", "registry id attn.sparse_mla.simt", 16.53, 43, 0.4, 2e9, 40e6,
       "simt_fp32"},
      {"nvjet_tst_128x64_64x8_1x1_v_bz_coopB_TNT", "gemm.dense", "tensor", "bf16", "name_rule",
       "rule nvjet_* (tensor core)", 3.92, 86, 61.0, 1e9, 50e6, "tensor_bf16"},
      {"cross_device_reduce_1stage<__nv_bfloat16, 8>", "comm", "comm", "bf16", "name_rule",
       "rule cross_device_reduce* (communication)", 2.18, 86, 0.0},
      {"indexer_topk_kernel<512> & select", "attn.indexer", "simt", "fp8", "registry",
       "registry id attn.indexer", 1.31, 43, 0.2},
      {"moe_router_topk<256, 6>", "moe.router", "simt", "bf16", "registry",
       "registry id moe.router", 0.87, 43, 0.0},
      {"rms_norm_kernel<c10::BFloat16>", "norm", "simt", "bf16", "name_rule", "rule *norm*",
       0.87, 87, 0.0},
      {"Memcpy DtoD (Device -> Device)", "memory", "memory", "unknown", "name_rule",
       "activity kind memcpy", 0.44, 4, 0.0},
      {"at::native::vectorized_elementwise_kernel<4, silu_and_mul<&>>", "elementwise",
       "other", "bf16", "name_rule", "rule *elementwise*", 0.30, 43, 0.0},
      {"Kernel2", "other", "other", "unknown", "unknown", "no rule matched", 0.13, 2, 0.0},
  };
  if (mx) {
    ks.insert(ks.begin(), K{"_mxfp4_slot_gemv_kernel<6, 2048> /* E2M1 x UE8M0 */",
                            "moe.experts", "simt", "mxfp4", "sass",
                            "FFMA 41%, IMAD 22%, no HMMA/OMMA", 16.97, 43, 0.6, 1.2e9, 120e6,
                            "simt_fp32"});
  } else {
    ks.insert(ks.begin(), K{"marlin_moe_w4a16<__nv_bfloat16, 4, 256, true>", "moe.experts",
                            "tensor", "nvfp4", "sass", "HMMA.16816.F32.BF16 18%", 3.39, 43,
                            71.0, 1.2e9, 120e6, "tensor_bf16"});
    // Only in the NVFP4 run, and in role "other", which diffs match by name only.
    ks.push_back(K{"quantize_act_e4m3_kernel<16>", "other", "other", "unknown", "unknown",
                   "no rule matched", 0.05, 43, 0.0});
  }
  return ks;
}

uint64_t Ns(double ms) { return static_cast<uint64_t>(ms * 1e6 + 0.5); }

constexpr uint32_t kFixtureSteps = 8;
constexpr uint32_t kFixtureBatch = 16;

// Source, device and run of a fixture profile.
void FillFixtureRun(const std::string& format, proto::Profile* p) {
  p->set_schema_version(1);
  p->set_label(format);
  p->set_provenance(proto::PROVENANCE_MEASURED_GPU);
  auto* src = p->add_sources();
  src->set_path(format + ".qtrace");
  src->set_kind("qtrace");
  src->set_provenance("measured on GPU");
  auto* dev = p->add_devices();
  dev->set_id(0);
  dev->set_name("NVIDIA RTX PRO 6000 Blackwell (test fixture)");
  dev->set_arch("sm_120");
  dev->set_kind("gpu");
  auto* run = p->mutable_run();
  run->set_model("v4-flash (fixture)");
  run->set_format(format);
  run->set_moe_backend(format == "mxfp4" ? "slot_gemv" : "w4a16_mma");
  run->set_backend("cuda");
  run->set_batch(kFixtureBatch);
  run->set_steps(kFixtureSteps);
  run->set_tp(8);
  run->set_layers(43);
}

// The work of a kernel row with FLOPs and bytes (`t` ns over `calls` launches), also summed
// into its role's row `wr`.
void AddFixtureWork(const K& k, uint64_t t, uint64_t calls, proto::KernelRow* r,
                    proto::RoleRow* wr) {
  // Every launch carries work; roofline time = max(bytes / BW, FLOPs / roof).
  const double flops = k.flops_per_call * static_cast<double>(calls);
  const double bytes = k.bytes_per_call * static_cast<double>(calls);
  r->set_flops(flops);
  r->set_bytes(bytes);
  r->set_work_launches(calls);
  r->set_work_time_ns(t);
  r->set_achieved_tflops(flops / static_cast<double>(t) / 1e3);
  r->set_achieved_gbps(bytes / static_cast<double>(t));
  r->set_roof_pipe(k.roof_pipe);
  const double mem = bytes / kFixtureBandwidthGbps;
  const double cmp = flops / (FixtureRoofTflops(k.roof_pipe) * 1e3);
  r->set_peak_fraction(std::max(mem, cmp) / static_cast<double>(t));
  r->set_bound(r->peak_fraction() < 0.25 ? "latency" : mem >= cmp ? "memory" : "compute");
  r->set_work_source(std::string(k.evidence) == "registry" || std::string(k.evidence) == "sass"
                         ? "registry work model"
                         : "derived from shapes: aten::mm [16,4096]x[4096,7680] bf16 (fixture)");
  wr->set_flops(wr->flops() + flops);
  wr->set_bytes(wr->bytes() + bytes);
  wr->set_work_launches(wr->work_launches() + calls);
  wr->set_work_time_ns(wr->work_time_ns() + t);
}

// One kernel row of `t` ns over `calls` launches.
void FillFixtureKernel(const K& k, uint64_t t, uint64_t calls, uint64_t total,
                       bool with_metrics, proto::KernelRow* r) {
  r->set_name(k.name);
  r->set_calls(calls);
  r->set_time_ns(t);
  r->set_share(static_cast<double>(t) / total);
  r->set_class_(k.cls);
  r->set_role(k.role);
  r->set_format(k.format);
  r->set_evidence(with_metrics && k.tensor_pct > 0 ? "measured" : k.evidence);
  r->set_evidence_detail(with_metrics && k.tensor_pct > 0
                             ? "sm__pipe_tensor_cycles_active " +
                                   std::to_string(static_cast<int>(k.tensor_pct)) + "%"
                             : k.detail);
  if (with_metrics) r->set_tensor_pipe_pct(k.tensor_pct);
  r->set_mean_ns(t / calls);
  r->set_median_ns(t / calls);
  r->set_p90_ns(t / calls * 11 / 10);
  r->set_min_ns(t / calls * 9 / 10);
  r->set_max_ns(t / calls * 13 / 10);
  r->set_provenance("measured on GPU");
  r->add_devices(0);
}

// Kernel rows, then the class and role rows they sum to (`cv`, `rv`: longest first, as
// added to `p`); returns the total kernel time.
uint64_t AddFixtureKernels(const std::vector<K>& ks, bool with_metrics, proto::Profile* p,
                           std::vector<proto::ClassRow>* cv, std::vector<proto::RoleRow>* rv) {
  uint64_t total = 0;
  for (const K& k : ks) total += Ns(k.step_ms) * kFixtureSteps;
  std::map<std::string, proto::ClassRow> classes;
  std::map<std::string, proto::RoleRow> roles;
  for (const K& k : ks) {
    auto* r = p->add_kernels();
    const uint64_t t = Ns(k.step_ms) * kFixtureSteps;
    const uint64_t calls = static_cast<uint64_t>(k.calls_per_step) * kFixtureSteps;
    FillFixtureKernel(k, t, calls, total, with_metrics, r);
    if (k.bytes_per_call > 0) AddFixtureWork(k, t, calls, r, &roles[k.role]);
    auto& c = classes[k.cls];
    c.set_class_(k.cls);
    c.set_time_ns(c.time_ns() + t);
    c.set_calls(c.calls() + calls);
    auto& ro = roles[k.role];
    ro.set_role(k.role);
    ro.set_time_ns(ro.time_ns() + t);
    ro.set_calls(ro.calls() + calls);
    ro.set_class_(k.cls);
    (*ro.mutable_class_time_ns())[k.cls] += t;
  }
  for (auto& [_, c] : classes) {
    c.set_share(static_cast<double>(c.time_ns()) / total);
    cv->push_back(c);
  }
  std::sort(cv->begin(), cv->end(), [](auto& a, auto& b) { return a.time_ns() > b.time_ns(); });
  for (auto& c : *cv) *p->add_classes() = c;
  for (auto& [_, r] : roles) {
    r.set_share(static_cast<double>(r.time_ns()) / total);
    if (r.work_time_ns() > 0) {
      r.set_achieved_tflops(r.flops() / static_cast<double>(r.work_time_ns()) / 1e3);
      r.set_achieved_gbps(r.bytes() / static_cast<double>(r.work_time_ns()));
    }
    rv->push_back(r);
  }
  std::sort(rv->begin(), rv->end(), [](auto& a, auto& b) { return a.time_ns() > b.time_ns(); });
  for (auto& r : *rv) *p->add_roles() = r;
  return total;
}

// The fixture device's roofs.
void FillFixtureRoofs(proto::Profile* p) {
  proto::DeviceRoofs* roofs = p->mutable_roofs();
  roofs->set_device("RTX PRO 6000 Blackwell");
  roofs->set_memory_gbps(kFixtureBandwidthGbps);
  roofs->set_memory_source("fixture: datasheet figure");
  for (const FixtureRoof& f : kFixtureRoofs) {
    proto::DeviceRoof* r = roofs->add_pipes();
    r->set_pipe(f.pipe);
    r->set_tflops(f.tflops);
    r->set_source("fixture: datasheet figure (dense)");
  }
}

// Totals from the kernel rows, and the run's tokens and wall time from them.
void FillFixtureTotals(uint64_t total, proto::Profile* p) {
  auto* t = p->mutable_totals();
  t->set_kernel_time_ns(total);
  t->set_busy_time_ns(total * 97 / 100);  // comm overlaps compute a little
  uint64_t count = 0;
  for (const auto& k : p->kernels()) count += k.calls();
  t->set_kernel_count(count);
  t->set_wall_time_ns(total * 105 / 100);
  t->set_span_ns(total * 104 / 100);
  t->set_idle_ns(total * 7 / 100);
  t->set_steps(kFixtureSteps);
  t->set_tokens(uint64_t{kFixtureSteps} * kFixtureBatch);
  t->set_tokens_per_s(kFixtureSteps * kFixtureBatch / (t->wall_time_ns() * 1e-9));
  t->set_provenance("measured on GPU");
  p->mutable_run()->set_tokens_generated(t->tokens());
  p->mutable_run()->set_wall_time_ns(t->wall_time_ns());
}

// Two streams, and a representative step: 4 layers shown, comm on stream 13 overlapping
// the next layer.
void AddFixtureTimeline(const std::vector<K>& ks, uint64_t total, proto::Profile* p) {
  auto* st = p->add_streams();
  st->set_device_id(0);
  st->set_stream_id(7);
  st->set_kernel_time_ns(total * 95 / 100);
  auto* st2 = p->add_streams();
  st2->set_device_id(0);
  st2->set_stream_id(13);
  st2->set_kernel_time_ns(total * 5 / 100);
  int64_t now = 0;
  for (int layer = 0; layer < 4; ++layer) {
    for (const K& k : ks) {
      if (std::string(k.role) == "memory" || std::string(k.role) == "other") continue;
      const int64_t dur = static_cast<int64_t>(k.step_ms * 1e6 / 43.0 *
                                               (std::string(k.role) == "gemm.dense" ? 0.5 : 1));
      auto* e = p->add_timeline();
      e->set_name(k.name);
      e->set_device_id(0);
      e->set_class_(k.cls);
      e->set_role(k.role);
      e->set_nvtx_path("decode/step 3/layer " + std::to_string(layer));
      if (std::string(k.role) == "comm") {
        e->set_stream_id(13);
        e->set_start_ns(now - dur / 2);
      } else {
        e->set_stream_id(7);
        e->set_start_ns(now);
        now += dur + 2000;
      }
      e->set_dur_ns(dur);
    }
  }
}

// Amdahl bounds of the two largest roles (`rv`) and of SIMT and tensor (`cv`).
void AddFixtureAmdahl(const std::vector<proto::ClassRow>& cv,
                      const std::vector<proto::RoleRow>& rv, proto::Ceilings* ce) {
  for (size_t i = 0; i < 2 && i < rv.size(); ++i) {
    auto* a = ce->add_amdahl();
    a->set_scope("role");
    a->set_name(rv[i].role());
    a->set_share(rv[i].share());
    a->set_speedup_if_vanished(1.0 / (1.0 - rv[i].share()));
    a->set_formula("1 / (1 - f)");
  }
  for (const auto& c : cv) {
    if (c.class_() != "simt" && c.class_() != "tensor") continue;
    auto* a = ce->add_amdahl();
    a->set_scope("class");
    a->set_name(c.class_());
    a->set_share(c.share());
    a->set_speedup_if_vanished(1.0 / (1.0 - c.share()));
    a->set_formula("1 / (1 - f)");
  }
}

// Format ceilings on the fixture device and on an H200; `format` is the run's.
void AddFixtureFormatCeilings(const std::string& format, proto::Ceilings* ce) {
  struct F {
    const char* device;
    const char* format;
    double bpw;
    const char* pipe;
    double bytes, flops, bw_tbs, rate_tf;
    bool profiled;
  };
  const F fs[] = {
      {"RTX PRO 6000 Blackwell", "mxfp4", 4.25, "simt_fp32", 2.1e9, 6.0e11, 1.79, 126, true},
      {"RTX PRO 6000 Blackwell", "nvfp4", 4.5, "tensor_fp4", 0.93e9, 5.2e10, 1.79, 2015, true},
      {"RTX PRO 6000 Blackwell", "fp8", 8.0, "tensor_fp8", 1.66e9, 5.2e10, 1.79, 1008, true},
      {"H200 SXM", "mxfp4", 4.25, "tensor_bf16", 0.88e9, 5.2e10, 4.8, 989, false},
      {"H200 SXM", "nvfp4", 4.5, "tensor_bf16", 0.93e9, 5.2e10, 4.8, 989, false},
  };
  for (const F& f : fs) {
    auto* r = ce->add_formats();
    r->set_device(f.device);
    r->set_format(f.format);
    r->set_bits_per_weight(f.bpw);
    r->set_pipe(f.pipe);
    r->set_bytes_per_step(f.bytes);
    r->set_flops_per_step(f.flops);
    r->set_memory_time_ns(f.bytes / (f.bw_tbs * 1e12) * 1e9);
    r->set_compute_time_ns(f.flops / (f.rate_tf * 1e12) * 1e9);
    r->set_step_time_ns(std::max(r->memory_time_ns(), r->compute_time_ns()));
    r->set_tokens_per_s(kFixtureBatch / (r->step_time_ns() * 1e-9));
    r->set_bound(r->memory_time_ns() >= r->compute_time_ns() ? "memory" : "compute");
    r->set_batch(kFixtureBatch);
    r->set_formula("B / max(bytes / BW, flops / rate)");
    r->set_inputs("BW " + std::to_string(f.bw_tbs).substr(0, 4) + " TB/s (datasheet), rate " +
                  std::to_string(static_cast<int>(f.rate_tf)) + " TFLOP/s");
    r->set_provenance("modelled from the device spec table");
    r->set_is_profiled_device(f.profiled);
    r->set_is_run_format(std::string(f.format) == format);
  }
}

// The warnings and the collector of a run with or without metrics.
void FillFixtureCollector(bool with_metrics, proto::Profile* p) {
  if (!with_metrics) {
    auto* w = p->add_warnings();
    w->set_code("metrics_unavailable");
    w->set_message(
        "tensor-pipe metrics unavailable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES "
        "(RmProfilingAdminOnly=1); classes come from SASS, registry and name rules");
  }
  auto* w = p->add_warnings();
  w->set_code("unknown_kernels");
  w->set_message("1 kernel could not be attributed: Kernel2 (0.3% of kernel time)");
  p->add_unknown_kernels("Kernel2");
  auto* col = p->mutable_collector();
  col->set_collector("cupti");
  col->set_records_total(p->totals().kernel_count());
  col->set_records_dropped(0);
  col->set_metrics_requested(true);
  col->set_metrics_available(with_metrics);
}

}  // namespace

proto::Profile MakeFixtureProfile(const std::string& format, bool with_metrics) {
  proto::Profile p;
  FillFixtureRun(format, &p);
  const auto ks = KernelsFor(format);
  std::vector<proto::ClassRow> cv;
  std::vector<proto::RoleRow> rv;
  const uint64_t total = AddFixtureKernels(ks, with_metrics, &p, &cv, &rv);
  FillFixtureRoofs(&p);
  FillFixtureTotals(total, &p);
  AddFixtureTimeline(ks, total, &p);
  auto* ce = p.mutable_ceilings();
  ce->set_measured_tokens_per_s(p.totals().tokens_per_s());
  AddFixtureAmdahl(cv, rv, ce);
  AddFixtureFormatCeilings(format, ce);
  FillFixtureCollector(with_metrics, &p);
  return p;
}

namespace {

void FillFixtureDiffSide(const proto::Profile& p, proto::DiffSide* s) {
  s->set_label(p.label());
  *s->mutable_sources() = p.sources();
  s->set_device(p.devices(0).name());
  s->set_format(p.run().format());
  s->set_kernel_time_ns(p.totals().kernel_time_ns());
  s->set_busy_time_ns(p.totals().busy_time_ns());
  s->set_tokens_per_s(p.totals().tokens_per_s());
  s->set_provenance(p.totals().provenance());
  for (const auto& c : p.classes()) {
    (*s->mutable_class_share())[c.class_()] = c.share();
    if (c.class_() == "tensor") s->set_tensor_share(c.share());
    if (c.class_() == "simt") s->set_simt_share(c.share());
  }
}

void FillFixtureDiffRow(const std::string& key, uint64_t at, uint64_t bt, double as, double bs,
                        proto::DiffRow* r) {
  r->set_key(key);
  r->set_a_time_ns(at);
  r->set_b_time_ns(bt);
  r->set_a_share(as);
  r->set_b_share(bs);
  r->set_delta_ns(static_cast<int64_t>(bt) - static_cast<int64_t>(at));
  r->set_delta_share(bs - as);
  r->set_status(at && bt ? "both" : at ? "only_a" : "only_b");
  if (at && bt) r->set_ratio(static_cast<double>(bt) / at);
}

// Kernels: same name first; then, within a role other than "other", the remaining
// kernels pair up (what analysis/diff does), so the SIMT slot GEMV and the tensor-core
// GEMM share the moe.experts row; the rest are only_a / only_b. `match[i]` is the B kernel
// of A's kernel i (-1: none); `used_b[j]` whether B's kernel j has a partner.
void MatchFixtureKernels(const proto::Profile& a, const proto::Profile& b,
                         std::vector<int>* match, std::vector<bool>* used_b) {
  used_b->assign(static_cast<size_t>(b.kernels_size()), false);
  match->assign(static_cast<size_t>(a.kernels_size()), -1);
  for (int i = 0; i < a.kernels_size(); ++i) {
    for (int j = 0; j < b.kernels_size(); ++j) {
      if (!(*used_b)[j] && a.kernels(i).name() == b.kernels(j).name()) {
        (*match)[i] = j;
        (*used_b)[j] = true;
        break;
      }
    }
  }
  for (int i = 0; i < a.kernels_size(); ++i) {
    if ((*match)[i] >= 0 || a.kernels(i).role() == "other") continue;
    for (int j = 0; j < b.kernels_size(); ++j) {
      if (!(*used_b)[j] && a.kernels(i).role() == b.kernels(j).role()) {
        (*match)[i] = j;
        (*used_b)[j] = true;
        break;
      }
    }
  }
}

void AddFixtureDiffKernels(const proto::Profile& a, const proto::Profile& b, proto::Diff* d) {
  std::vector<bool> used_b;
  std::vector<int> match;
  MatchFixtureKernels(a, b, &match, &used_b);
  for (int i = 0; i < a.kernels_size(); ++i) {
    const auto& ka = a.kernels(i);
    auto* r = d->add_kernels();
    if (match[i] >= 0) {
      const auto& kb = b.kernels(match[i]);
      FillFixtureDiffRow(ka.name(), ka.time_ns(), kb.time_ns(), ka.share(), kb.share(), r);
      r->set_b_name(kb.name());
      r->set_b_class(kb.class_());
    } else {
      FillFixtureDiffRow(ka.name(), ka.time_ns(), 0, ka.share(), 0, r);
    }
    r->set_a_name(ka.name());
    r->set_a_class(ka.class_());
    r->set_role(ka.role());
  }
  for (int j = 0; j < b.kernels_size(); ++j) {
    if (used_b[j]) continue;
    const auto& kb = b.kernels(j);
    auto* r = d->add_kernels();
    FillFixtureDiffRow(kb.name(), 0, kb.time_ns(), 0, kb.share(), r);
    r->set_b_name(kb.name());
    r->set_b_class(kb.class_());
    r->set_role(kb.role());
  }
}

}  // namespace

proto::Diff MakeFixtureDiff(const proto::Profile& a, const proto::Profile& b) {
  proto::Diff d;
  d.set_schema_version(1);
  FillFixtureDiffSide(a, d.mutable_a());
  FillFixtureDiffSide(b, d.mutable_b());
  for (const char* cls : {"simt", "tensor", "comm", "memory", "other"}) {
    uint64_t at = 0, bt = 0;
    double as = 0, bs = 0;
    for (const auto& c : a.classes())
      if (c.class_() == cls) at = c.time_ns(), as = c.share();
    for (const auto& c : b.classes())
      if (c.class_() == cls) bt = c.time_ns(), bs = c.share();
    FillFixtureDiffRow(cls, at, bt, as, bs, d.add_classes());
  }
  for (const auto& ra : a.roles()) {
    for (const auto& rb : b.roles()) {
      if (ra.role() != rb.role()) continue;
      auto* r = d.add_roles();
      FillFixtureDiffRow(ra.role(), ra.time_ns(), rb.time_ns(), ra.share(), rb.share(), r);
      r->set_a_class(ra.class_());
      r->set_b_class(rb.class_());
      r->set_role(ra.role());
      r->set_a_calls(ra.calls());
      r->set_b_calls(rb.calls());
    }
  }
  AddFixtureDiffKernels(a, b, &d);
  d.set_tensor_share_delta(d.b().tensor_share() - d.a().tensor_share());
  d.set_tokens_per_s_ratio(d.b().tokens_per_s() / d.a().tokens_per_s());
  d.set_tokens_per_s_delta(d.b().tokens_per_s() - d.a().tokens_per_s());
  d.set_headline("moe.experts moved from simt to tensor");
  return d;
}

proto::Trace MakeFixtureTrace() {
  proto::Trace t;
  auto* h = t.mutable_header();
  h->set_schema_version(1);
  h->set_provenance(proto::PROVENANCE_MEASURED_GPU);
  auto* d = h->add_devices();
  d->set_id(0);
  d->set_name("NVIDIA H200 (fixture)");
  d->set_arch("sm_90");
  d->set_kind("gpu");
  h->mutable_run()->set_format("mxfp4");
  const int64_t base = 1'000'000'000;
  struct A {
    proto::ActivityKind kind;
    uint64_t stream;
    int64_t start, end;
    const char* name;
    const char* nvtx;
  };
  // Stream 7: k1 [0,100us), k2 [50us,150us) overlaps k1 (e.g. two graph branches),
  // k3 [150us,200us). Stream 13: comm [120us,260us). Times in ns from base.
  const A acts[] = {
      {proto::ACTIVITY_KIND_KERNEL, 7, 0, 100'000, "gemv<float, 4> & co", "decode/step 0/layer 0/moe"},
      {proto::ACTIVITY_KIND_KERNEL, 7, 50'000, 150'000, "sparse_mla<64>", "decode/step 0/layer 0/attn"},
      {proto::ACTIVITY_KIND_KERNEL, 7, 150'000, 200'000, "rms_norm", "decode/step 0/layer 1"},
      {proto::ACTIVITY_KIND_KERNEL, 13, 120'000, 260'000, "cross_device_reduce_1stage", ""},
      {proto::ACTIVITY_KIND_MEMCPY, 7, 200'500, 201'500, "Memcpy DtoH", ""},
  };
  for (const A& a : acts) {
    auto* x = t.add_activities();
    x->set_kind(a.kind);
    x->set_device_id(0);
    x->set_stream_id(a.stream);
    x->set_start_ns(base + a.start);
    x->set_end_ns(base + a.end);
    x->set_name(a.name);
    x->set_nvtx_path(a.nvtx);
    x->set_correlation_id(static_cast<uint64_t>(a.start) + 1);
    x->mutable_attribution()->set_pipe_class(a.kind == proto::ACTIVITY_KIND_MEMCPY ? "memory"
                                                                                   : "simt");
    if (a.kind == proto::ACTIVITY_KIND_MEMCPY) {
      x->set_bytes(4096);
      x->set_copy_kind("DtoH");
    }
  }
  struct R {
    const char* path;
    const char* name;
    int64_t start, end;
    uint32_t depth;
  };
  const R ranges[] = {{"decode", "decode", -10'000, 300'000, 0},
                      {"decode/step 0", "step 0", -5'000, 290'000, 1},
                      {"decode/step 0/layer 0", "layer 0", 0, 150'000, 2},
                      {"decode/step 0/layer 1", "layer 1", 150'000, 210'000, 2}};
  for (const R& r : ranges) {
    auto* x = t.add_ranges();
    x->set_path(r.path);
    x->set_name(r.name);
    x->set_start_ns(base + r.start);
    x->set_end_ns(base + r.end);
    x->set_pid(100);
    x->set_tid(101);
    x->set_depth(r.depth);
  }
  return t;
}

}  // namespace qprof::testing
