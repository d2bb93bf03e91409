// RangeIndex (analysis/importers/common/import_util.h): per-thread NVTX ranges nested into
// paths, on hand-written ranges whose paths are spelled out here. Covers nesting, siblings,
// crossed ranges, ranges never closed, equal starts (the longer is the outer), threads
// interleaved in the source, repeated names (interned once), the paths handed to Build's
// callback and those PathAt answers for launches (built on first ask, then the same string).
#include <string>
#include <tuple>
#include <vector>

#include "analysis/importers/common/import_util.h"
#include "gtest/gtest.h"

namespace qprof::importers {
namespace {

struct Emitted {
  std::string path, name;
  int64_t start, end;
  uint32_t tid, depth;
  bool operator==(const Emitted& o) const {
    return std::tie(path, name, start, end, tid, depth) ==
           std::tie(o.path, o.name, o.start, o.end, o.tid, o.depth);
  }
};

std::vector<Emitted> BuildAll(RangeIndex* index) {
  std::vector<Emitted> out;
  index->Build([&out](const proto::NvtxRange& r) {
    out.push_back({r.path(), r.name(), r.start_ns(), r.end_ns(), static_cast<uint32_t>(r.tid()),
                   r.depth()});
  });
  return out;
}

std::string PathAt(const RangeIndex& index, ThreadKey t, int64_t time) {
  const std::string* p = index.PathAt(t, time);
  return p == nullptr ? "(none)" : *p;
}

TEST(RangeIndex, NestsEachThreadsRangesIntoPaths) {
  const ThreadKey a{1, 10}, b{1, 20};
  RangeIndex index;
  // Thread a: decode [0,100) > step 0 [0,50) > layer 0 [5,20), layer 1 [20,45); step 1
  // [50,100) > layer 0 [55,70). Thread b, interleaved in the source: one range never closed.
  index.AddRange(a, 0, 100, "decode");
  index.AddRange(b, 30, RangeIndex::kOpenEnd, "loader");
  index.AddRange(a, 0, 50, "step 0");
  index.AddRange(a, 5, 20, "layer 0");
  index.AddRange(b, 40, 60, "prefetch");
  index.AddRange(a, 20, 45, "layer 1");
  index.AddRange(a, 50, 100, "step 1");
  index.AddRange(a, 55, 70, "layer 0");  // a repeated name
  EXPECT_EQ(index.range_count(), 8u);
  const std::vector<Emitted> want = {
      {"decode", "decode", 0, 100, 10, 0},
      {"decode/step 0", "step 0", 0, 50, 10, 1},
      {"decode/step 0/layer 0", "layer 0", 5, 20, 10, 2},
      {"decode/step 0/layer 1", "layer 1", 20, 45, 10, 2},
      {"decode/step 1", "step 1", 50, 100, 10, 1},
      {"decode/step 1/layer 0", "layer 0", 55, 70, 10, 2},
      {"loader", "loader", 30, 30, 20, 0},  // never closed: reported as an instant
      {"loader/prefetch", "prefetch", 40, 60, 20, 1},
  };
  EXPECT_EQ(BuildAll(&index), want);
  EXPECT_EQ(index.range_count(), 8u);
  // Launch points: half-open ranges, a launch at a range's start is inside it.
  EXPECT_EQ(PathAt(index, a, 5), "decode/step 0/layer 0");
  EXPECT_EQ(PathAt(index, a, 19), "decode/step 0/layer 0");
  EXPECT_EQ(PathAt(index, a, 20), "decode/step 0/layer 1");
  EXPECT_EQ(PathAt(index, a, 47), "decode/step 0");
  EXPECT_EQ(PathAt(index, a, 60), "decode/step 1/layer 0");
  EXPECT_EQ(PathAt(index, a, 99), "decode/step 1");
  EXPECT_EQ(PathAt(index, a, 100), "(none)");
  EXPECT_EQ(PathAt(index, a, -1), "(none)");
  EXPECT_EQ(PathAt(index, b, 50), "loader/prefetch");
  EXPECT_EQ(PathAt(index, b, 1'000'000), "loader");
  EXPECT_EQ(PathAt(index, ThreadKey{2, 10}, 10), "(none)");
  // The same launch point gets the same string, at the same address, every time.
  const std::string* first = index.PathAt(a, 6);
  EXPECT_EQ(index.PathAt(a, 7), first);
  EXPECT_EQ(*first, "decode/step 0/layer 0");
}

TEST(RangeIndex, EqualStartsPutTheLongerOutsideAndCrossedRangesAreTolerated) {
  const ThreadKey t{1, 1};
  RangeIndex index;
  index.AddRange(t, 10, 20, "inner");   // same start as "outer", shorter: nested in it
  index.AddRange(t, 10, 40, "outer");
  index.AddRange(t, 15, 30, "crossed");  // starts inside "inner", ends after it
  index.AddRange(t, 32, 35, "after");    // "inner" ended at 20 but "crossed" is on top until 30
  const std::vector<Emitted> got = BuildAll(&index);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].path, "outer");
  EXPECT_EQ(got[1].path, "outer/inner");
  EXPECT_EQ(got[2].path, "outer/inner/crossed");
  EXPECT_EQ(got[2].depth, 2u);
  EXPECT_EQ(got[3].path, "outer/after");  // the crossed pair is popped by then
  EXPECT_EQ(PathAt(index, t, 25), "outer/inner/crossed");
  EXPECT_EQ(PathAt(index, t, 31), "outer");
  EXPECT_EQ(PathAt(index, t, 33), "outer/after");
}

TEST(RangeIndex, ManyRangesWithUniqueAndRepeatedNames) {
  // PyTorch's emit_nvtx numbers every op ("aten::mm, op_id = 7"): thousands of unique names
  // under a few repeated ones. Each launch inside op i gets its own path.
  const ThreadKey t{3, 4};
  RangeIndex index;
  index.Reserve(16);  // a hint smaller than what comes
  for (int s = 0; s < 50; ++s) {
    const int64_t base = s * 1000;
    index.AddRange(t, base, base + 1000, "step");
    for (int i = 0; i < 40; ++i) {
      index.AddRange(t, base + 10 + i * 20, base + 25 + i * 20,
                     "aten::mm, op_id = " + std::to_string(s * 40 + i));
    }
  }
  size_t emitted = 0;
  index.Build([&](const proto::NvtxRange& r) {
    ++emitted;
    EXPECT_EQ(r.depth() == 0 ? "step" : "step/" + r.name(), r.path());
  });
  EXPECT_EQ(emitted, 50u * 41u);
  for (int s = 0; s < 50; s += 7) {
    for (int i = 0; i < 40; i += 13) {
      const int64_t at = s * 1000 + 10 + i * 20 + 3;
      EXPECT_EQ(PathAt(index, t, at), "step/aten::mm, op_id = " + std::to_string(s * 40 + i));
    }
    EXPECT_EQ(PathAt(index, t, s * 1000 + 5), "step");
  }
}

TEST(StringArena, EmptyNamesFirstAndBetweenOthers) {
  // An NVTX range may have an empty name, and may be the first one a trace has: the arena
  // then has no block yet (a fuzzed nsys export found the pointer arithmetic on none).
  StringArena a;
  const uint32_t empty = a.Intern("");
  EXPECT_EQ(a[empty], "");
  const uint32_t step = a.Intern("step");
  EXPECT_NE(step, empty);
  EXPECT_EQ(a.Intern(""), empty);
  EXPECT_EQ(a.Intern("step"), step);
  EXPECT_EQ(a[step], "step");
  EXPECT_EQ(a.size(), 2u);
  // A name larger than a block gets a block of its own; later names still intern.
  const std::string big(200 << 10, 'x');
  const uint32_t b = a.Intern(big);
  EXPECT_EQ(a[b], big);
  EXPECT_EQ(a[a.Intern("after")], "after");
  EXPECT_EQ(a[step], "step");
}

TEST(RangeIndex, AnEmptyNameFirst) {
  const ThreadKey t{1, 2};
  RangeIndex index;
  index.AddRange(t, 0, 100, "");
  index.AddRange(t, 10, 20, "inner");
  EXPECT_EQ(BuildAll(&index).size(), 2u);
  EXPECT_EQ(PathAt(index, t, 15), "/inner");
}

}  // namespace
}  // namespace qprof::importers
