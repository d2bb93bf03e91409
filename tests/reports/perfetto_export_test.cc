#include "reports/perfetto/perfetto_export.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/reports/fixtures.h"

namespace qprof::reports {
namespace {

struct Ev {
  std::string name, cat;
  int64_t pid = 0, tid = 0;
  double ts = 0, dur = 0;
};

struct Parsed {
  std::vector<Ev> events;                         // ph == X
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  std::map<int64_t, std::string> process_names;
  int64_t origin = 0;
};

std::string Str(simdjson::dom::element e) { return std::string(std::string_view(e)); }

Parsed Parse(const std::string& json) {
  Parsed p;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json);  // throws on invalid JSON
  p.origin = int64_t(doc["otherData"]["time_origin_ns"]);
  for (simdjson::dom::element e : doc["traceEvents"]) {
    const std::string ph = Str(e["ph"]);
    if (ph == "M") {
      const std::string what = Str(e["name"]);
      if (what == "thread_name") {
        p.thread_names[{int64_t(e["pid"]), int64_t(e["tid"])}] =
            Str(e["args"]["name"]);
      } else if (what == "process_name") {
        p.process_names[int64_t(e["pid"])] = Str(e["args"]["name"]);
      }
      continue;
    }
    EXPECT_EQ(ph, "X");
    Ev ev;
    ev.name = Str(e["name"]);
    ev.cat = Str(e["cat"]);
    ev.pid = int64_t(e["pid"]);
    ev.tid = int64_t(e["tid"]);
    ev.ts = double(e["ts"]);
    ev.dur = double(e["dur"]);
    p.events.push_back(ev);
  }
  return p;
}

// Events of one track must nest: sorted by start, each event either starts after the
// enclosing one ends or ends within it.
void ExpectNestingPerTrack(const std::vector<Ev>& events) {
  std::map<std::pair<int64_t, int64_t>, std::vector<Ev>> tracks;
  for (const auto& e : events) tracks[{e.pid, e.tid}].push_back(e);
  for (auto& [key, evs] : tracks) {
    std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
    });
    std::vector<double> stack;  // end times
    for (const auto& e : evs) {
      while (!stack.empty() && stack.back() <= e.ts + 1e-9) stack.pop_back();
      if (!stack.empty()) {
        EXPECT_LE(e.ts + e.dur, stack.back() + 1e-9)
            << e.name << " overlaps its neighbour on track " << key.first << "/" << key.second;
      }
      stack.push_back(e.ts + e.dur);
    }
  }
}

TEST(PerfettoExportTest, ParsesNestsAndKeepsTimes) {
  proto::Trace t = testing::MakeFixtureTrace();
  Parsed p = Parse(TraceToPerfettoJson(t));
  ASSERT_EQ(p.events.size(), t.activities_size() + t.ranges_size());
  ExpectNestingPerTrack(p.events);
  // Times: ts * 1000 + origin is the record's start, dur * 1000 its length, to the ns.
  for (const auto& a : t.activities()) {
    bool found = false;
    for (const auto& e : p.events) {
      if (e.name != a.name()) continue;
      found = true;
      EXPECT_EQ(std::llround(e.ts * 1000) + p.origin, a.start_ns()) << a.name();
      EXPECT_EQ(std::llround(e.dur * 1000), a.end_ns() - a.start_ns()) << a.name();
    }
    EXPECT_TRUE(found) << a.name();
  }
  // The earliest record is the NVTX "decode" range, 10 us before the first kernel.
  EXPECT_EQ(p.origin, t.ranges(0).start_ns());
}

TEST(PerfettoExportTest, OverlappingKernelsOfOneStreamGoToAnExtraTrack) {
  proto::Trace t = testing::MakeFixtureTrace();
  Parsed p = Parse(TraceToPerfettoJson(t));
  int64_t tid_k1 = -1, tid_k2 = -1, tid_k3 = -1;
  for (const auto& e : p.events) {
    if (e.name == "gemv<float, 4> & co") tid_k1 = e.tid;
    if (e.name == "sparse_mla<64>") tid_k2 = e.tid;
    if (e.name == "rms_norm") tid_k3 = e.tid;
  }
  EXPECT_NE(tid_k1, tid_k2);  // k2 starts inside k1 and ends after it
  EXPECT_EQ(tid_k1, tid_k3);  // k3 starts after k1 ended: back on the first track
  EXPECT_EQ((p.thread_names[{0, tid_k1}]), "stream 7");
  EXPECT_EQ((p.thread_names[{0, tid_k2}]), "stream 7 (overlap 2)");
  EXPECT_EQ(p.process_names[0], "GPU 0: NVIDIA H200 (fixture)");
  EXPECT_EQ(p.process_names[1000000], "NVTX ranges");
}

TEST(PerfettoExportTest, NestedRangesShareATrack) {
  proto::Trace t = testing::MakeFixtureTrace();
  Parsed p = Parse(TraceToPerfettoJson(t));
  std::map<int64_t, int> per_tid;
  for (const auto& e : p.events)
    if (e.cat == "nvtx") per_tid[e.tid]++;
  ASSERT_EQ(per_tid.size(), 1u);  // decode > step 0 > layer 0, layer 1 nest properly
  EXPECT_EQ(per_tid.begin()->second, 4);
}

TEST(PerfettoExportTest, InvalidRecordsAndStrangeNamesAreSafe) {
  proto::Trace t = testing::MakeFixtureTrace();
  auto* bad = t.add_activities();
  bad->set_name("zero");
  bad->set_start_ns(5);
  bad->set_end_ns(5);
  t.mutable_activities(0)->set_name(std::string("quote\" back\\ ctl\x01 bad\xff utf8 \xc3\xa9"));
  std::string json = TraceToPerfettoJson(t);
  Parsed p = Parse(json);
  EXPECT_EQ(p.events.size(), t.activities_size() - 1 + t.ranges_size());
  bool found = false;
  for (const auto& e : p.events) {
    if (e.name.rfind("quote\" back\\ ctl\x01 bad", 0) == 0) {
      found = true;
      EXPECT_NE(e.name.find("\xef\xbf\xbd utf8 \xc3\xa9"), std::string::npos);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_NE(json.find("\"invalid_records\":1"), std::string::npos);
}

TEST(PerfettoExportTest, EmptyTraceIsValidJson) {
  proto::Trace t;
  Parsed p = Parse(TraceToPerfettoJson(t));
  EXPECT_TRUE(p.events.empty());
}

TEST(PerfettoExportTest, ManyOverlapsStillNest) {
  // 200 kernels on one stream with random overlaps (seeded): every track must nest.
  proto::Trace t;
  uint64_t state = 12345;
  auto rnd = [&](int mod) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(mod));
  };
  int64_t now = 1'000'000;
  for (int i = 0; i < 200; ++i) {
    auto* a = t.add_activities();
    a->set_kind(proto::ACTIVITY_KIND_KERNEL);
    a->set_stream_id(static_cast<uint64_t>(rnd(2)));
    a->set_name("k" + std::to_string(i));
    now += rnd(500);
    a->set_start_ns(now);
    a->set_end_ns(now + 1 + rnd(3000));
  }
  Parsed p = Parse(TraceToPerfettoJson(t));
  EXPECT_EQ(p.events.size(), 200u);
  ExpectNestingPerTrack(p.events);
}

}  // namespace
}  // namespace qprof::reports

namespace qprof::reports {
namespace {

TEST(PerfettoExportTest, SeveralTracesGetTheirOwnProcesses) {
  proto::Trace a = testing::MakeFixtureTrace(), b = testing::MakeFixtureTrace();
  a.mutable_header()->set_source_path("/x/rank0.qtrace");
  b.mutable_header()->set_source_path("/x/rank1.qtrace");
  for (auto& act : *b.mutable_activities()) {
    act.set_start_ns(act.start_ns() + 777);
    act.set_end_ns(act.end_ns() + 777);
  }
  Parsed p = Parse(TracesToPerfettoJson({&a, &b}));
  EXPECT_EQ(p.events.size(), 2u * (a.activities_size() + a.ranges_size()));
  EXPECT_EQ(p.process_names[0], "rank0.qtrace: GPU 0: NVIDIA H200 (fixture)");
  EXPECT_EQ(p.process_names[2000000], "rank1.qtrace: GPU 0: NVIDIA H200 (fixture)");
  EXPECT_EQ(p.process_names[3000000], "rank1.qtrace: NVTX ranges");
  ExpectNestingPerTrack(p.events);
}

}  // namespace
}  // namespace qprof::reports
