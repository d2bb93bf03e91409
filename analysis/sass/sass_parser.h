// Static attribution from machine code: which kernels issue tensor-core instructions.
//
// `cuobjdump --dump-sass` prints, per embedded cubin, "arch = sm_XX" (fatbins) or
// "code for sm_XX", then per kernel "Function : <mangled name>" followed by instruction
// lines "/*0090*/  @!P0 HMMA.16816.F32.BF16 R4, R8, R12, R4 ;  /* 0x... */".
// ParseSass() counts, per (kernel, arch), instructions by base opcode (the mnemonic before
// the first '.') and sorts them into:
//   tensor MMA: every opcode ending in "MMA": HMMA (mma.sync FP16/BF16/TF32), HGMMA/QGMMA/
//     IGMMA (Hopper wgmma), IMMA (integer), QMMA/OMMA (sm_120 FP8 / block-scaled FP4),
//     DMMA (FP64), BMMA, and the tcgen05 forms UTCHMMA/UTCQMMA/UTCOMMA/UTCIMMA/... (sm_100);
//   SIMT FP32: FFMA FADD FMUL FMNMX FFMA2 FADD2 FMUL2 (and FSETP/FCHK are not counted);
//   SIMT FP16: HFMA2 HADD2 HMUL2 HMNMX2;   SIMT FP64: DFMA DADD DMUL;
//   SIMT integer: IMAD IADD3 IMUL IDP (dp4a) IDP2 IABS IMNMX ISCADD LEA IADD, and sm_90+'s
//     VIADD VIMNMX VIMNMX3 VIADDMNMX.
// Classification: any tensor MMA -> "tensor" (the kernel's math runs on tensor cores; a
// static count is not weighted by execution, so the MMA/FFMA ratio is reported but not
// used as a threshold); else FP/INT arithmetic -> "simt"; else "other" (pure data movement).
#ifndef QPROF_ANALYSIS_SASS_SASS_PARSER_H_
#define QPROF_ANALYSIS_SASS_SASS_PARSER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::sass {

struct SassKernelStats {
  std::string name;            // as printed after "Function :" (usually mangled)
  std::string demangled;       // demangled, normalised (analysis/names/kernel_name.h)
  std::string arch;            // "sm_90"; "" when the dump did not say
  uint64_t instructions = 0;
  uint64_t tensor_mma = 0;
  uint64_t simt_fp32 = 0;
  uint64_t simt_fp16 = 0;
  uint64_t simt_fp64 = 0;
  uint64_t simt_int = 0;
  std::map<std::string, uint64_t> mma_opcodes;  // "HMMA" -> 24, "UTCQMMA" -> 4
  std::string pipe_class;      // "tensor", "simt", "other"
  std::string detail;          // "HMMA 24, FFMA 310, IMAD 95"
  // The innermost FMA loops: loops closed by a backward branch ("@!P0 BRA 0xb80" at a
  // later address) that hold FFMA and no other such loop, their instructions and FFMA
  // summed (one iteration each, static). instructions / FFMA is what the model's SIMT issue
  // term uses as issue slots per FMA (analysis/model): a lower bound on the real cost, as
  // it leaves out work outside those loops. 0 when the kernel has no such loop.
  uint64_t fma_loop_instructions = 0;
  uint64_t fma_loop_ffma = 0;
};

// Parses cuobjdump/nvdisasm SASS text. Kernels appear in input order. InvalidArgument
// when the text holds no "Function :" at all (not a SASS dump).
absl::StatusOr<std::vector<SassKernelStats>> ParseSass(std::string_view text);

// Where cuobjdump is: $PATH, /usr/local/cuda/bin, or the pip wheel
// (nvidia/cu*/bin under python3's site-packages). NotFound with how to install it.
absl::StatusOr<std::string> FindCuobjdump();

// Runs `cuobjdump --dump-sass <path>` and returns its output. NotFound when the file
// or cuobjdump is missing; InvalidArgument when cuobjdump rejects the file.
absl::StatusOr<std::string> RunCuobjdump(const std::string& path);

// ParseSass(RunCuobjdump(path)).
absl::StatusOr<std::vector<SassKernelStats>> SassStatsForFile(const std::string& path);

// The machine code of a file, or of every cubin under a folder.
struct SassOfPath {
  std::vector<SassKernelStats> stats;
  std::vector<std::string> files;    // files whose SASS was read
  std::vector<std::string> skipped;  // "<file>: <why>" (folders only: one bad cubin of many)
};

// Files ending in .cubin under `dir`, at any depth, sorted: the layout of Triton's kernel
// cache (~/.triton/cache/<hash>/<kernel>.cubin, one folder per compiled kernel) and of
// `cuobjdump -xelf all` output. Symbolic links to folders are not followed.
absl::StatusOr<std::vector<std::string>> CubinsUnder(const std::string& dir);

// A file: SassStatsForFile. A folder: every cubin under it (CubinsUnder); a cubin that
// cuobjdump cannot read is listed in `skipped` rather than stopping the others. NotFound
// when the folder holds no cubin, or when nothing in it could be read.
absl::StatusOr<SassOfPath> SassStatsForPath(const std::string& path);

}  // namespace qprof::sass

#endif  // QPROF_ANALYSIS_SASS_SASS_PARSER_H_
