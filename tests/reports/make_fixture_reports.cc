// Writes the fixture reports (JSON + HTML for two profiles and their diff) into a folder,
// for the headless-browser test: make_fixture_reports OUT_DIR
#include <cstdio>
#include <string>

#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "fmt/core.h"
#include "reports/html/html_report.h"
#include "reports/json/json_report.h"
#include "tests/reports/fixtures.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_fixture_reports OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  namespace r = qprof::reports;
  auto a = qprof::testing::MakeFixtureProfile("mxfp4", /*with_metrics=*/true);
  auto b = qprof::testing::MakeFixtureProfile("nvfp4", /*with_metrics=*/false);
  auto d = qprof::testing::MakeFixtureDiff(a, b);
  auto host = qprof::testing::MakeFixtureProfile("mxfp4", false);
  host.set_provenance(qprof::proto::PROVENANCE_MEASURED_HOST);
  host.mutable_devices(0)->set_kind("host_cpu");
  host.mutable_devices(0)->set_name("host CPU (fixture)");
  host.mutable_devices(0)->set_arch("x86_64");
  host.set_label("mxfp4-host");
  // A host-CPU pair with a modelled GPU projection beside it (what `qprof run` writes on a
  // machine without a GPU).
  auto host_b = qprof::testing::MakeFixtureProfile("nvfp4", false);
  host_b.set_provenance(host.provenance());
  *host_b.mutable_devices(0) = host.devices(0);
  host_b.set_label("nvfp4-host");
  auto host_diff = qprof::testing::MakeFixtureDiff(host, host_b);
  host_diff.mutable_a()->set_provenance("measured on host CPU (not a GPU)");
  host_diff.mutable_b()->set_provenance("measured on host CPU (not a GPU)");
  absl::Status st = qprof::MakeDirs(dir);
  auto check = [&](absl::Status s) {
    if (st.ok() && !s.ok()) st = s;
  };
  check(r::WriteProfileJson(a, dir + "/mxfp4.json"));
  check(r::WriteProfileJson(b, dir + "/nvfp4.json"));
  check(r::WriteProfileJson(host, dir + "/host.json"));
  check(r::WriteDiffJson(d, dir + "/diff.json"));
  check(r::WriteProfileHtml(a, dir + "/mxfp4.html", {.links = {{"mxfp4.json", "mxfp4.json"}}}));
  check(r::WriteProfileHtml(b, dir + "/nvfp4.html"));
  check(r::WriteProfileHtml(host, dir + "/host.html"));
  check(r::WriteDiffHtml(d, dir + "/diff.html", {.a = &a, .b = &b}));
  check(r::WriteDiffJson(host_diff, dir + "/host-diff.json"));
  check(r::WriteDiffHtml(host_diff, dir + "/host-diff.html",
                         {.a = &host, .b = &host_b, .projection = &d}));
  if (!st.ok()) {
    fmt::print(stderr, "make_fixture_reports: {}\n", st.message());
    return 1;
  }
  fmt::print("wrote fixture reports to {}\n", dir);
  return 0;
}
