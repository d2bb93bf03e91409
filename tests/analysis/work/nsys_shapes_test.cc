// A synthetic Nsight Systems export of a PyTorch run under torch.autograd.profiler.emit_nvtx
// (record_shapes=True): the NVTX push/pop ranges are named the way torch names them
// ("aten::addmm, seq = 11, op_id = 2, sizes = [[1024], [64, 512], [512, 1024], [], []],
// input_op_ids = [(1,0)]"), kernels are joined to them through the runtime launch on the same
// thread. The work each kernel gets is written out here from those sizes.
#include <sqlite3.h>

#include <cstdio>
#include <string>

#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof {
namespace {

std::string MakeDb(const std::string& name, const std::string& sql) {
  std::string path = importers::testing::WriteTemp(name, "");
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return path;
}

constexpr int64_t kTid = (int64_t{300} << 24) | 301;  // pid 300, tid 301

// One op range around one launch: the NVTX row (push/pop, eventType 59), the runtime row and
// the kernel row, at times `t` (ns).
std::string Call(int64_t t, int64_t corr, const std::string& range, int kernel_name_id,
                 int64_t kernel_ns) {
  const std::string tid = std::to_string(kTid);
  const std::string pid = std::to_string(int64_t{300} << 24);
  return "INSERT INTO NVTX_EVENTS VALUES (" + std::to_string(t) + ", " + std::to_string(t + 50) +
         ", 59, '" + range + "', NULL, " + tid + ");\n" +
         "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(t + 10) + ", " +
         std::to_string(t + 20) + ", " + tid + ", " + std::to_string(corr) + ", 7);\n" +
         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(t + 1000) + ", " +
         std::to_string(t + 1000 + kernel_ns) + ", 0, 7, " + std::to_string(corr) + ", " + pid +
         ", " + std::to_string(kernel_name_id) + ", " + std::to_string(kernel_name_id) +
         ", 128, 1, 1, 256, 1, 1, 96, 0, 32768);\n";
}

TEST(NsysShapes, EmitNvtxSizesGiveTheKernelsWork) {
  std::string sql = R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES (1, 'ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn'),
      (2, 'nvjet_tst_64x8_64x16_4x1_v_bz_TNT'), (7, 'cudaLaunchKernel');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
      shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
      blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER,
      dynamicSharedMemory INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
      correlationId INTEGER, nameId INTEGER);
    CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
      textId INTEGER, globalTid INTEGER);
  )";
  // Two calls of one addmm (bf16 from the kernel name), an mm whose kernel names no dtype, and
  // an mm whose sizes do not add up.
  const std::string addmm = "sizes = [[1024], [64, 512], [512, 1024], [], []], input_op_ids = [(1,0)]";
  sql += Call(10000, 1, "aten::addmm, seq = 11, op_id = 2, " + addmm, 1, 4000);
  sql += Call(20000, 2, "aten::addmm, seq = 12, op_id = 5, " + addmm, 1, 6000);
  sql += Call(30000, 3, "aten::mm, seq = 13, op_id = 8, sizes = [[8, 16], [16, 32]]", 2, 2000);
  sql += Call(40000, 4, "aten::mm, seq = 14, op_id = 9, sizes = [[8, 16], [17, 32]]", 2, 2000);
  const std::string path = MakeDb("emit_nvtx_shapes.sqlite", sql);
  importers::ImportOptions io;
  io.progress = false;
  auto trace = importers::ImportFile(path, io);
  ASSERT_TRUE(trace.ok()) << trace.status();
  // The per-call numbers are gone from the frames: both addmm calls share one frame.
  int addmm_frames = 0;
  for (const auto& f : trace->header().launch_context_stats().frames()) {
    addmm_frames += f.name().rfind("aten::addmm", 0) == 0;
    EXPECT_EQ(f.name().find("seq ="), std::string::npos) << f.name();
  }
  EXPECT_EQ(addmm_frames, 1);
  AnalyzeOptions options;
  options.device = "a100";
  auto p = Analyze({*trace}, options);
  ASSERT_TRUE(p.ok()) << p.status();
  const proto::KernelRow* gemm = nullptr;
  const proto::KernelRow* jet = nullptr;
  for (const auto& k : p->kernels()) {
    if (k.name().rfind("ampere_bf16", 0) == 0) gemm = &k;
    if (k.name().rfind("nvjet", 0) == 0) jet = &k;
  }
  ASSERT_NE(gemm, nullptr);
  ASSERT_NE(jet, nullptr);
  // addmm [1024] + [64,512] x [512,1024], bf16: 2*M*N*K + M*N FLOPs; bias, A, B and the output.
  const double flops = 2.0 * 64 * 1024 * 512 + 64.0 * 1024;
  const double bytes = 2.0 * (1024 + 64 * 512 + 512 * 1024 + 64 * 1024);
  EXPECT_EQ(gemm->work_launches(), 2u);
  EXPECT_EQ(gemm->work_time_ns(), 10000u);
  EXPECT_DOUBLE_EQ(gemm->flops(), 2 * flops);
  EXPECT_DOUBLE_EQ(gemm->bytes(), 2 * bytes);
  EXPECT_DOUBLE_EQ(gemm->achieved_tflops(), 2 * flops / 10000 / 1e3);
  EXPECT_DOUBLE_EQ(gemm->achieved_gbps(), 2 * bytes / 10000);
  EXPECT_EQ(gemm->roof_pipe(), "tensor_bf16");
  EXPECT_NE(gemm->work_source().find("derived from shapes: aten::addmm"), std::string::npos);
  ASSERT_TRUE(gemm->has_peak_fraction());
  // On the A100: max(bytes / 2039 GB/s, FLOPs / 312 TFLOP/s) over the measured 10 us.
  EXPECT_NEAR(gemm->peak_fraction(),
              std::max(2 * bytes / 2039.0, 2 * flops / 312e3) / 10000, 1e-12);
  // The nvjet GEMM: FLOPs from the sizes, bytes unknown (its name states no dtype), and the
  // call whose sizes do not add up carries nothing.
  EXPECT_EQ(jet->work_launches(), 1u);
  EXPECT_DOUBLE_EQ(jet->flops(), 2.0 * 8 * 32 * 16);
  EXPECT_EQ(jet->bytes(), 0);
  EXPECT_FALSE(jet->has_achieved_gbps());
  EXPECT_NE(jet->work_note().find("bytes unknown"), std::string::npos) << jet->work_note();
  EXPECT_NE(jet->work_note().find("1 of 2 launches"), std::string::npos) << jet->work_note();
  bool warned = false;
  for (const auto& w : p->warnings()) {
    if (w.code() == "work_shapes_invalid") {
      warned = true;
      EXPECT_NE(w.message().find("1 kernel launches"), std::string::npos) << w.message();
      EXPECT_NE(w.message().find("inner dimensions differ"), std::string::npos) << w.message();
    }
  }
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace qprof
