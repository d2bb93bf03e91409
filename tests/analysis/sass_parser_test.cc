#include "analysis/sass/sass_parser.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/file_util.h"
#include "gtest/gtest.h"

namespace qprof::sass {
namespace {

// A hand-written listing with the tensor forms of several generations (the mnemonics are
// real; the kernels are not). Encoding comments and an encoding-only line are included.
constexpr char kSnippet[] = R"(
	code for sm_100a
		Function : _Z12tcgen05_gemmv
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
                                                                          /* 0x000fe20000000800 */
        /*0010*/              @!P0 UTCQMMA gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], idesc[UR11], UPT ;
        /*0020*/                   UTCOMMA.2CTA gdesc[UR4], gdesc[UR6], tmem[UR8] ;
        /*0030*/                   UTCHMMA gdesc[UR4], gdesc[UR6], tmem[UR8] ;
        /*0040*/                   FFMA R2, R3, R4, R2 ;
        /*0050*/                   EXIT ;
		Function : _Z14hopper_fp8gemmv
        /*0000*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24 ;
        /*0010*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24, gsb0 ;
        /*0020*/                   IMAD.MOV.U32 R0, RZ, RZ, R1 ;
		Function : _Z10dp4a_gemvv
        /*0000*/                   IDP.4A.S8.S8 R5, R6, R7, R5 ;
        /*0010*/                   FFMA R2, R3, R4, R2 ;
        /*0020*/                   HFMA2.MMA R3, -RZ, RZ, 0, 2.38e-07 ;
        /*0030*/                   HFMA2 R8, R9, R10, R8 ;
		Function : _Z9copy_onlyv
        /*0000*/                   LDG.E R0, desc[UR4][R2.64] ;
        /*0010*/                   STG.E desc[UR4][R2.64], R0 ;
	code for sm_120a
		Function : _Z9fp4_mmav
        /*0000*/                   OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X R4, R8, R12, R4, R20, R21 ;
)";

TEST(SassParser, CountsTensorAndSimtInstructions) {
  auto r = ParseSass(kSnippet);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 5u);
  const auto& tc = (*r)[0];
  EXPECT_EQ(tc.name, "_Z12tcgen05_gemmv");
  EXPECT_EQ(tc.demangled, "tcgen05_gemm");
  EXPECT_EQ(tc.arch, "sm_100a");
  EXPECT_EQ(tc.tensor_mma, 3u);
  EXPECT_EQ(tc.mma_opcodes.at("UTCQMMA"), 1u);
  EXPECT_EQ(tc.mma_opcodes.at("UTCOMMA"), 1u);
  EXPECT_EQ(tc.simt_fp32, 1u);
  EXPECT_EQ(tc.instructions, 6u);  // the encoding-only line is not an instruction
  EXPECT_EQ(tc.pipe_class, "tensor");
  const auto& hop = (*r)[1];
  EXPECT_EQ(hop.mma_opcodes.at("QGMMA"), 1u);
  EXPECT_EQ(hop.mma_opcodes.at("HGMMA"), 1u);
  EXPECT_EQ(hop.simt_int, 1u);
  const auto& dp4a = (*r)[2];
  EXPECT_EQ(dp4a.pipe_class, "simt");
  EXPECT_EQ(dp4a.simt_int, 1u);
  EXPECT_EQ(dp4a.simt_fp32, 1u);
  EXPECT_EQ(dp4a.simt_fp16, 1u);  // HFMA2.MMA -RZ, RZ is a constant move, not math
  EXPECT_EQ((*r)[3].pipe_class, "other");
  EXPECT_EQ((*r)[4].arch, "sm_120a");
  EXPECT_EQ((*r)[4].mma_opcodes.at("OMMA"), 1u);
}

TEST(SassParser, RealCuobjdumpFatbinListing) {
  // tests/analysis/testdata/sass/fatbin_sm80_sm120.sass: cuobjdump --dump-sass of the
  // fatbin built from fatbin_sm80_sm120.cu for sm_80 and sm_120 (NOP lines removed).
  auto text = ReadFile(std::string(QPROF_SOURCE_DIR) +
                       "/tests/analysis/testdata/sass/fatbin_sm80_sm120.sass");
  ASSERT_TRUE(text.ok()) << text.status();
  auto r = ParseSass(*text);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 6u);  // 3 kernels x 2 arches
  int tensor = 0;
  for (const auto& k : *r) {
    EXPECT_TRUE(k.arch == "sm_80" || k.arch == "sm_120") << k.arch;
    if (k.demangled == "mma_bf16") {
      EXPECT_EQ(k.pipe_class, "tensor");
      EXPECT_EQ(k.mma_opcodes.at("HMMA"), 1u);
      ++tensor;
    } else if (k.demangled == "saxpy") {
      EXPECT_EQ(k.pipe_class, "simt");
      EXPECT_GE(k.simt_fp32, 1u);
    } else {
      EXPECT_EQ(k.demangled, "ns::tmpl<4>");
      EXPECT_EQ(k.pipe_class, "simt");
    }
  }
  EXPECT_EQ(tensor, 2);
}

// Innermost FMA loops: an outer loop (0x0040..0x00f0) holding two inner loops; only the
// inner ones count (instructions 0x0050..0x0080 = 4 with 2 FFMA, 0x00a0..0x00c0 = 3 with
// 1 FFMA); a loop without FFMA (0x0100..0x0110) does not.
TEST(SassParser, InnermostFmaLoops) {
  const char* text = R"(
	code for sm_90
		Function : loops
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0040*/                   LDG.E R2, [R4.64] ;
        /*0050*/                   FFMA R3, R2, R2, R3 ;
        /*0060*/                   FFMA R3, R2, R2, R3 ;
        /*0070*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0080*/              @!P0 BRA 0x50 ;
        /*0090*/                   LDS R6, [R7] ;
        /*00a0*/                   FFMA R8, R6, R6, R8 ;
        /*00b0*/                   ISETP.NE.AND P1, PT, R5, RZ, PT ;
        /*00c0*/               @P1 BRA 0xa0 ;
        /*00d0*/                   FMUL R9, R8, R3 ;
        /*00e0*/                   IADD3 R10, R10, 0x1, RZ ;
        /*00f0*/              @!P2 BRA 0x40 ;
        /*0100*/                   IADD3 R11, R11, 0x1, RZ ;
        /*0110*/              @!P3 BRA 0x100 ;
        /*0120*/                   EXIT ;
)";
  auto r = ParseSass(text);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].fma_loop_ffma, 3u);
  EXPECT_EQ((*r)[0].fma_loop_instructions, 7u);
}

TEST(SassParser, RejectsTextWithoutFunctions) {
  EXPECT_FALSE(ParseSass("").ok());
  EXPECT_FALSE(ParseSass("hello\nworld\n").ok());
}

// Triton's cache: one folder per compiled kernel holding <name>.cubin beside its .ptx,
// .json and other stages. Only the cubins are read, at any depth, in a stable order.
TEST(SassParser, CubinsUnderAFolderLikeTritonsCache) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("qprof_cubins_" + std::to_string(getpid()));
  fs::remove_all(root);
  for (const char* f : {"b2/_mxfp4_slot_gemv_kernel.cubin", "b2/_mxfp4_slot_gemv_kernel.ptx",
                        "b2/_mxfp4_slot_gemv_kernel.json", "a1/_tiled_sparse_decode_kernel.cubin",
                        "a1/deeper/x.cubin", "notes.txt"}) {
    fs::create_directories((root / f).parent_path());
    ASSERT_TRUE(WriteFileAtomic((root / f).string(), "x").ok());
  }
  fs::create_directories(root / "folder.cubin");  // a folder is not a cubin
  auto got = CubinsUnder(root.string());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0], (root / "a1/_tiled_sparse_decode_kernel.cubin").string());
  EXPECT_EQ((*got)[1], (root / "a1/deeper/x.cubin").string());
  EXPECT_EQ((*got)[2], (root / "b2/_mxfp4_slot_gemv_kernel.cubin").string());
  // A folder without cubins says so; one whose cubins cannot be read says why.
  EXPECT_EQ(SassStatsForPath((root / "missing.cubin").string()).status().code(),
            absl::StatusCode::kNotFound);
  fs::create_directories(root / "empty");
  auto empty = SassStatsForPath((root / "empty").string());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(empty.status().message()).find("no .cubin files"), std::string::npos);
  if (FindCuobjdump().ok()) {  // the fake cubins hold no device code
    auto bad = SassStatsForPath(root.string());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(std::string(bad.status().message()).find("none of its 3 cubins"),
              std::string::npos)
        << bad.status();
  }
  fs::remove_all(root);
}

TEST(SassParser, MissingFileIsNotFound) {
  auto r = RunCuobjdump("/nonexistent/file.cubin");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

TEST(SassParser, Sm90IntegerOpsAreSimtInteger) {
  // ptxas for sm_90 and later writes most integer adds and min/max as VIADD / VIMNMX
  // (our own kernels: 1754 VIADD against 3892 IADD3); a kernel of only those is SIMT work.
  constexpr char kListing[] = R"(
	code for sm_90a
		Function : _Z7indexerv
        /*0000*/                   VIADD R0, R0, 0x1 ;
        /*0010*/                   VIMNMX R1, R0, R2, PT ;
        /*0020*/                   VIMNMX3 R1, R0, R2, R3, PT ;
        /*0030*/                   VIADDMNMX R4, R0, 0x1, R2, PT ;
        /*0040*/                   ISETP.GE.AND P0, PT, R0, R2, PT ;
        /*0050*/                   EXIT ;
)";
  auto r = ParseSass(kListing);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].simt_int, 4u);  // ISETP is a compare, not counted (as FSETP is not)
  EXPECT_EQ((*r)[0].pipe_class, "simt");
}

}  // namespace
}  // namespace qprof::sass
