// The communication sections of the terminal and HTML reports on a hand-made Profile of two
// GPUs: one line and one band per GPU (the band's parts add up to its span, never summed
// across GPUs), the collectives, copies, idle causes, host synchronisation and the diff's
// comm rows. Names carry < & to check escaping.
#include <string>

#include "gtest/gtest.h"
#include "reports/html/html_report.h"
#include "reports/terminal/terminal_report.h"

namespace qprof {
namespace {

proto::Profile TwoGpuProfile() {
  proto::Profile p;
  p.mutable_totals()->set_provenance("imported from tp.json");
  for (uint32_t id : {0u, 1u}) {
    proto::ProfileDevice* d = p.add_devices();
    d->set_id(id);
    d->set_name("NVIDIA RTX PRO 6000");
    d->set_trace(id);
    d->set_span_ns(1000);
    d->set_busy_time_ns(800);
    d->set_idle_ns(200);
    d->set_compute_ns(600 + id * 10);
    d->set_comm_ns(300);
    d->set_comm_exposed_ns(200 - id * 10);
    d->set_copy_ns(50);
    d->set_copy_exposed_ns(40);
    d->set_band_span_ns(1100);
    p.add_sources()->set_path("rank" + std::to_string(id) + ".json");
  }
  proto::IdleSummary* s = p.mutable_idle();
  s->set_span_ns(2000);
  s->set_busy_ns(1600);
  s->set_idle_ns(400);
  s->set_device_timelines(2);
  for (const char* c : {"host_wait", "kernel_wait", "other", "no_launch_time"}) {
    proto::IdleCauseRow* r = s->add_causes();
    r->set_cause(c);
    r->set_gaps(1);
    r->set_time_ns(100);
    r->set_share(0.25);
  }
  s->set_cause_rule("HTA's rule");
  proto::HostSyncRow* sync = s->mutable_host()->add_sync();
  sync->set_kind("stream_synchronize");
  sync->set_calls(3);
  sync->set_time_ns(700);
  s->mutable_host()->set_sync_calls(3);
  s->mutable_host()->set_sync_ns(700);
  proto::CommSummary* c = p.mutable_comm();
  c->set_total_ns(600);
  c->set_exposed_ns(390);
  c->set_hidden_ns(210);
  c->set_copy_total_ns(100);
  c->set_copy_exposed_ns(80);
  c->set_devices(2);
  c->set_note("comm note");
  proto::CollectiveRow* r = c->add_collectives();
  r->set_name("all_reduce");
  r->set_library("NCCL");
  r->set_process_group("0 (pg<&>)");
  r->set_group_size(8);
  r->set_calls(16);
  r->set_calls_with_bytes(16);
  r->set_bytes(16 * 131072);
  r->set_bytes_per_call(131072);
  r->set_time_ns(600);
  r->set_busbw_gbps(3.82);
  r->set_link("PCIe Gen5 x16");
  r->set_link_peak_gbps(63);
  r->set_link_fraction(3.82 / 63);
  proto::CopyRow* cp = p.add_copies();
  cp->set_kind("HtoD");
  cp->set_memory("pageable -> device");
  cp->set_calls(2);
  cp->set_bytes(4096);
  cp->set_time_ns(100);
  cp->set_gbps(40.96);
  p.mutable_tp_diagnosis()->set_note("Tensor-parallel decode: every step runs collectives.");
  p.mutable_tp_diagnosis()->set_what_if_speedup(1.2);
  return p;
}

TEST(CommReport, TerminalHasOneLinePerGpuAndTheTables) {
  reports::TerminalOptions o;
  o.width = 120;
  const std::string text = reports::ProfileSummaryText(TwoGpuProfile(), o);
  EXPECT_NE(text.find("summed over 2 GPU timelines"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 0 (input 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 1 (input 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("Communication and copies"), std::string::npos);
  EXPECT_NE(text.find("all_reduce"), std::string::npos);
  EXPECT_NE(text.find("131kB"), std::string::npos) << text;  // size per call
  EXPECT_NE(text.find("pageable -> device"), std::string::npos);
  EXPECT_NE(text.find("host_wait"), std::string::npos);
  EXPECT_NE(text.find("stream_synchronize 3 x"), std::string::npos) << text;
  EXPECT_NE(text.find("Tensor-parallel decode"), std::string::npos);
  for (size_t pos = 0, nl; pos < text.size(); pos = nl + 1) {
    nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    EXPECT_LE(nl - pos, 120u) << text.substr(pos, nl - pos);
  }
}

TEST(CommReport, HtmlBandsAddUpPerGpuAndAreEscaped) {
  const std::string html = reports::RenderProfileHtml(TwoGpuProfile());
  EXPECT_EQ(html.find("pg<&>"), std::string::npos);
  EXPECT_NE(html.find("pg&lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(html.find("id=\"per-gpu\""), std::string::npos);
  EXPECT_NE(html.find("id=\"collectives\""), std::string::npos);
  EXPECT_NE(html.find("id=\"copies\""), std::string::npos);
  EXPECT_NE(html.find("id=\"idle-causes\""), std::string::npos);
  EXPECT_NE(html.find("id=\"host-sync\""), std::string::npos);
  EXPECT_NE(html.find("id=\"tp-diagnosis\""), std::string::npos);
  // Each band's parts sum to its span: GPU 0 = 500 compute-only + 100 hidden + 200 exposed +
  // 40 copies + 260 idle = 1100 (GPU 1: 500 + 110 + 190 + 40 + 260).
  for (uint32_t dev : {0u, 1u}) {
    const size_t at = html.find("class=\"splitbar\" data-device=\"" + std::to_string(dev) + "\"");
    ASSERT_NE(at, std::string::npos);
    const size_t end = html.find("</svg>", at);
    uint64_t sum = 0;
    for (size_t pos = html.find("data-ns=\"", at); pos < end; pos = html.find("data-ns=\"", pos + 1)) {
      sum += std::stoull(html.substr(pos + 9));
    }
    EXPECT_EQ(sum, 1100u) << dev;
  }
}

TEST(CommReport, DiffCommRowsInBothReports) {
  proto::Diff d;
  d.set_unit("step");
  d.mutable_a()->set_comm_exposed_ns(390);
  d.mutable_b()->set_comm_exposed_ns(120);
  proto::CommDiffRow* r = d.add_comm();
  r->set_key("all_reduce 0 (default_pg)");
  r->set_kind("collective");
  r->set_status("both");
  r->set_a_calls(16);
  r->set_b_calls(16);
  r->set_a_per_unit_ns(150);
  r->set_b_per_unit_ns(50);
  r->set_per_unit_ratio(1.0 / 3);
  r->set_a_gbps(3.8);
  r->set_b_gbps(11.4);
  r->set_rate("busbw");
  reports::TerminalOptions o;
  const std::string text = reports::DiffSummaryText(d, o);
  EXPECT_NE(text.find("Communication and copies (time per step"), std::string::npos) << text;
  EXPECT_NE(text.find("all_reduce 0 (default_pg)"), std::string::npos);
  EXPECT_NE(text.find("0.33x"), std::string::npos) << text;
  const std::string html = reports::RenderDiffHtml(d, {});
  EXPECT_NE(html.find("id=\"diff-comm\""), std::string::npos);
  EXPECT_NE(html.find("11.4 GB/s busbw"), std::string::npos);
}

}  // namespace
}  // namespace qprof
