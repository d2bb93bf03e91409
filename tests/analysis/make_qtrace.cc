// Test helper: text-proto trace fixture -> .qtrace, for end-to-end runs of `qprof analyze`
// and `qprof diff` on traces with a known answer, and for sizing runs.
//   make_qtrace IN.textproto OUT.qtrace [REPEAT]
// REPEAT (default 1) repeats the activities and ranges REPEAT times, each copy shifted by
// the fixture's span, with step numbers in NVTX paths renumbered.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "google/protobuf/text_format.h"
#include "proto/trace_io.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s IN.textproto OUT.qtrace [REPEAT]\n", argv[0]);
    return 2;
  }
  auto text = qprof::ReadFile(argv[1]);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", std::string(text.status().message()).c_str());
    return 2;
  }
  qprof::proto::Trace in;
  if (!google::protobuf::TextFormat::ParseFromString(*text, &in)) {
    std::fprintf(stderr, "%s: not a text-format Trace\n", argv[1]);
    return 2;
  }
  int repeat = argc > 3 ? std::atoi(argv[3]) : 1;
  if (repeat < 1) repeat = 1;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const auto& a : in.activities()) {
    first = std::min(first, a.start_ns());
    last = std::max(last, a.end_ns());
  }
  int64_t span = last > first ? last - first + 1000 : 1000;
  int steps = 0;
  for (const auto& r : in.ranges()) steps += r.path().find("step ") != std::string::npos;
  qprof::proto::Trace out = in;
  out.clear_activities();
  out.clear_ranges();
  for (int i = 0; i < repeat; ++i) {
    auto renumber = [&](std::string p) {
      size_t pos = p.find("step ");
      if (pos == std::string::npos || steps == 0) return p;
      size_t j = pos + 5, k = j;
      while (k < p.size() && isdigit(static_cast<unsigned char>(p[k]))) ++k;
      int n = std::atoi(p.substr(j, k - j).c_str()) + i * steps;
      return p.substr(0, j) + std::to_string(n) + p.substr(k);
    };
    for (auto a : in.activities()) {
      a.set_start_ns(a.start_ns() + i * span);
      a.set_end_ns(a.end_ns() + i * span);
      a.set_nvtx_path(renumber(a.nvtx_path()));
      *out.add_activities() = std::move(a);
    }
    for (auto r : in.ranges()) {
      r.set_start_ns(r.start_ns() + i * span);
      r.set_end_ns(r.end_ns() + i * span);
      r.set_path(renumber(r.path()));
      r.set_name(renumber(r.name()));
      *out.add_ranges() = std::move(r);
    }
  }
  if (repeat > 1) {
    auto* run = out.mutable_header()->mutable_run();
    run->set_steps(run->steps() * repeat);
    run->set_tokens_generated(run->tokens_generated() * repeat);
    run->set_wall_time_ns(run->wall_time_ns() * repeat);
  }
  auto st = qprof::WriteTrace(out, argv[2]);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
    return 1;
  }
  std::printf("wrote %s: %d activities\n", argv[2], out.activities_size());
  return 0;
}
