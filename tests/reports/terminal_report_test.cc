#include "reports/terminal/terminal_report.h"

#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "reports/common/format.h"
#include "reports/terminal/terminal_util.h"
#include "tests/reports/fixtures.h"

namespace qprof::reports {
namespace {

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Display width of a line without ANSI escapes (all fixture text is ASCII).
size_t VisibleWidth(const std::string& l) {
  size_t n = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i] == '\x1b') {
      while (i < l.size() && l[i] != 'm') ++i;
      continue;
    }
    ++n;
  }
  return n;
}

TEST(TerminalReportTest, ProfileFitsWidthAndHasEverySection) {
  auto p = testing::MakeFixtureProfile("mxfp4", /*with_metrics=*/true);
  std::string s = ProfileSummaryText(p, {});
  if (std::getenv("QPROF_PRINT")) std::fputs(s.c_str(), stdout);
  for (const auto& l : Lines(s)) EXPECT_LE(l.size(), 100u) << l;
  for (const char* section : {"Pipe classes", "Top kernels", "Roles", "Ceilings", "Warnings"}) {
    EXPECT_NE(s.find(section), std::string::npos) << section;
  }
  EXPECT_NE(s.find("measured on GPU"), std::string::npos);
  EXPECT_NE(s.find("tc%"), std::string::npos);
  EXPECT_NE(s.find("moe.experts"), std::string::npos);
  // Without colour there are no escape sequences at all.
  EXPECT_EQ(s.find('\x1b'), std::string::npos);
  // Amdahl of the 39% role: 1/(1-0.39) = 1.64x, computed, not copied.
  const double f = p.roles(0).share();
  EXPECT_NE(s.find(FormatRatio(1.0 / (1.0 - f))), std::string::npos);
}

TEST(TerminalReportTest, NarrowAndWideWidthsHold) {
  auto p = testing::MakeFixtureProfile("nvfp4", true);
  p.mutable_kernels(0)->set_name(std::string(300, 'k') + "<" + std::string(200, 'T') + ">");
  for (int w : {80, 100, 140}) {
    for (const auto& l : Lines(ProfileSummaryText(p, {.width = w}))) {
      EXPECT_LE(l.size(), static_cast<size_t>(w)) << "width " << w << ": " << l;
    }
  }
}

TEST(TerminalReportTest, ColourOnlyWhenAskedAndAlignmentUnchanged) {
  auto p = testing::MakeFixtureProfile("mxfp4", false);
  std::string plain = ProfileSummaryText(p, {.color = false});
  std::string color = ProfileSummaryText(p, {.color = true});
  EXPECT_NE(color.find("\x1b[32m"), std::string::npos);  // tensor in green
  auto pl = Lines(plain), cl = Lines(color);
  ASSERT_EQ(pl.size(), cl.size());
  for (size_t i = 0; i < pl.size(); ++i) EXPECT_EQ(VisibleWidth(cl[i]), pl[i].size()) << pl[i];
}

TEST(TerminalReportTest, MetricsUnavailableIsSaidNotHidden) {
  auto p = testing::MakeFixtureProfile("mxfp4", false);
  std::string s = ProfileSummaryText(p);
  EXPECT_EQ(s.find("tc%"), std::string::npos);
  EXPECT_NE(s.find("tensor-pipe % not measured"), std::string::npos);
  EXPECT_NE(s.find("metrics_unavailable"), std::string::npos);
  EXPECT_NE(s.find("INSUFFICIENT_PRIVILEGES"), std::string::npos);
}

TEST(TerminalReportTest, HostCpuRunSaysSo) {
  auto p = testing::MakeFixtureProfile("mxfp4", false);
  p.mutable_devices(0)->set_kind("host_cpu");
  p.mutable_devices(0)->set_name("host CPU (2 threads)");
  p.set_provenance(proto::PROVENANCE_MEASURED_HOST);
  EXPECT_NE(ProfileSummaryText(p).find("measured on host CPU (not a GPU)"), std::string::npos);
}

TEST(TerminalReportTest, DiffTellsTheStoryFirst) {
  auto a = testing::MakeFixtureProfile("mxfp4", false);
  auto b = testing::MakeFixtureProfile("nvfp4", false);
  auto d = testing::MakeFixtureDiff(a, b);
  std::string s = DiffSummaryText(d, {});
  if (std::getenv("QPROF_PRINT")) std::fputs(s.c_str(), stdout);
  auto lines = Lines(s);
  ASSERT_GE(lines.size(), 3u);
  // The second line is the key role, with its class change and both shares.
  EXPECT_NE(lines[1].find("moe.experts: simt -> tensor"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(FormatShare(a.roles(0).share())), std::string::npos) << lines[1];
  for (const auto& l : lines) EXPECT_LE(l.size(), 100u) << l;
  EXPECT_NE(s.find("~ A"), std::string::npos);
  EXPECT_NE(s.find("-> B"), std::string::npos);
  EXPECT_NE(s.find("only B"), std::string::npos);  // quantize_act_e4m3_kernel
  EXPECT_NE(s.find("marlin_moe_w4a16"), std::string::npos);
  EXPECT_NE(s.find(FormatRatio(d.tokens_per_s_ratio())), std::string::npos);
}

TEST(FormatTest, Units) {
  EXPECT_EQ(FormatNs(950), "950 ns");
  EXPECT_EQ(FormatNs(812'000), "812 us");
  EXPECT_EQ(FormatNs(43'500'000), "43.5 ms");
  EXPECT_EQ(FormatNs(1'234'000'000), "1.23 s");
  EXPECT_EQ(FormatNs(999'999), "1.00 ms");
  EXPECT_EQ(FormatShare(0.39), "39.0%");
  EXPECT_EQ(FormatShare(0.0001), "<0.1%");
  EXPECT_EQ(FormatSharePoints(0.181), "+18.1 pp");
  EXPECT_EQ(FormatSharePoints(-0.0002), "0.0 pp");
  EXPECT_EQ(FormatDeltaNs(-812'000), "-812 us");
  EXPECT_EQ(FormatSig3(1050), "1.05k");
  EXPECT_EQ(FormatSig3(3.36e4), "33.6k");
  EXPECT_EQ(FormatRatio(1.0 / (1.0 - 0.39)), "1.64x");
  EXPECT_EQ(Ellipsize("abcdefghij", 7), "ab...ij");
  EXPECT_EQ(Ellipsize("short", 7), "short");
  // Never splits a UTF-8 sequence ("é" is two bytes).
  std::string e = Ellipsize("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 7);
  for (size_t i = 0; i < e.size(); ++i) {
    if (static_cast<unsigned char>(e[i]) == 0xC3) {
      ASSERT_LT(i + 1, e.size());
    }
  }
  EXPECT_NE(static_cast<unsigned char>(e[e.size() - 1]), 0xC3);
}

}  // namespace
}  // namespace qprof::reports

namespace qprof::reports {
namespace {

TEST(ShortKernelNameTest, KeepsWhatTellsKernelsApart) {
  const std::string mul =
      "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"
      "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
      "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, "
      "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
      "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, "
      "at::native::gpu_kernel_impl_nocast<...>)";
  EXPECT_EQ(ShortKernelName(mul, 40), "elementwise_kernel<..MulFunctor..>");
  const std::string silu =
      "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
      "namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::"
      "{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2> >"
      "(int, at::native::(anonymous namespace)::silu_kernel)";
  EXPECT_EQ(ShortKernelName(silu, 46), "vectorized_elementwise_kernel<..silu_kernel..>");
  EXPECT_EQ(ShortKernelName("void short_kernel<1>(int)", 40), "short_kernel<1>(int)");
  EXPECT_LE(ShortKernelName(std::string(300, 'x'), 30).size(), 30u);
}

TEST(WrapTest, ContinuationIsIndentedAndLongWordsAreCut) {
  std::string w = Wrap("alpha beta gamma " + std::string(50, 'z'), 20, "  ! ");
  std::istringstream in(w);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    EXPECT_LE(line.size(), 20u) << line;
    if (n++ > 0) {
      EXPECT_EQ(line.rfind("      ", 0), 0u) << line;
    }
  }
  EXPECT_GE(n, 4);
  EXPECT_EQ(w.rfind("  ! alpha beta gamma", 0), 0u);
}

}  // namespace
}  // namespace qprof::reports
