#include "analysis/sass/sass_parser.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/names/kernel_name.h"
#include "base/status_macros.h"

namespace qprof::sass {
namespace {

enum class Kind { kTensor, kFp32, kFp16, kFp64, kInt, kOther };

Kind KindOf(std::string_view op, std::string_view full) {
  if (op.size() >= 3 && op.substr(op.size() - 3) == "MMA") return Kind::kTensor;
  static const std::set<std::string_view> kFp32 = {"FFMA", "FADD", "FMUL", "FMNMX",
                                                    "FFMA2", "FADD2", "FMUL2", "FSWZADD"};
  static const std::set<std::string_view> kFp16 = {"HFMA2", "HADD2", "HMUL2", "HMNMX2"};
  static const std::set<std::string_view> kFp64 = {"DFMA", "DADD", "DMUL"};
  // VIADD / VIMNMX / VIMNMX3 / VIADDMNMX: the integer add and min/max that ptxas emits for
  // sm_90 and later where older targets had IADD3 / IMNMX (most of our kernels' integer adds).
  static const std::set<std::string_view> kInt = {
      "IMAD", "IADD3", "IMUL",  "IDP",    "IDP2",    "IABS",     "IMNMX",
      "ISCADD", "LEA", "IADD", "VIADD", "VIMNMX", "VIMNMX3", "VIADDMNMX"};
  if (kFp32.count(op)) return Kind::kFp32;
  if (kFp16.count(op)) {
    // "HFMA2.MMA Rd, -RZ, RZ, imm" is the compiler's constant move, not FP16 math.
    if (full.find(".MMA") != std::string_view::npos && full.find("-RZ, RZ") != std::string_view::npos) {
      return Kind::kOther;
    }
    return Kind::kFp16;
  }
  if (kFp64.count(op)) return Kind::kFp64;
  if (kInt.count(op)) return Kind::kInt;
  return Kind::kOther;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Instructions of the kernel being parsed, for the main-loop search.
struct Inst {
  uint64_t addr;
  bool ffma;
  int64_t branch_to;  // backward or forward BRA target; -1 when not a branch
};

// The innermost loops that hold FFMA: [target, branch] ranges of backward branches with
// FFMA that contain no other such range; their instructions and FFMA are summed.
void FindMainLoop(const std::vector<Inst>& insts, SassKernelStats& k) {
  struct Loop {
    uint64_t begin, end, n = 0, ffma = 0;
  };
  std::vector<Loop> loops;
  for (const Inst& b : insts) {
    if (b.branch_to < 0 || static_cast<uint64_t>(b.branch_to) >= b.addr) continue;
    Loop l{static_cast<uint64_t>(b.branch_to), b.addr};
    for (const Inst& i : insts) {
      if (i.addr < l.begin || i.addr > l.end) continue;
      ++l.n;
      l.ffma += i.ffma;
    }
    if (l.ffma > 0) loops.push_back(l);
  }
  for (const Loop& l : loops) {
    bool inner = true;
    for (const Loop& o : loops) {
      const bool inside = o.begin >= l.begin && o.end <= l.end && (o.begin != l.begin || o.end != l.end);
      if (inside) inner = false;
    }
    if (!inner) continue;
    k.fma_loop_instructions += l.n;
    k.fma_loop_ffma += l.ffma;
  }
}

void Finish(SassKernelStats& k) {
  if (k.tensor_mma > 0) {
    k.pipe_class = "tensor";
  } else if (k.simt_fp32 + k.simt_fp16 + k.simt_fp64 + k.simt_int > 0) {
    k.pipe_class = "simt";
  } else {
    k.pipe_class = "other";
  }
  std::vector<std::string> parts;
  for (const auto& [op, n] : k.mma_opcodes) parts.push_back(absl::StrCat(op, " ", n));
  parts.push_back(absl::StrCat("FP32 ", k.simt_fp32));
  if (k.simt_fp16) parts.push_back(absl::StrCat("FP16x2 ", k.simt_fp16));
  if (k.simt_fp64) parts.push_back(absl::StrCat("FP64 ", k.simt_fp64));
  parts.push_back(absl::StrCat("INT ", k.simt_int));
  k.detail = absl::StrCat(absl::StrJoin(parts, ", "), " of ", k.instructions,
                          " instructions", k.arch.empty() ? "" : absl::StrCat(" (", k.arch, ")"));
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out.push_back(c);
  }
  out += "'";
  return out;
}

}  // namespace

absl::StatusOr<std::vector<SassKernelStats>> ParseSass(std::string_view text) {
  std::vector<SassKernelStats> out;
  std::string arch;
  SassKernelStats* cur = nullptr;
  std::vector<Inst> insts;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = Trim(text.substr(pos, eol - pos));
    pos = eol + 1;
    if (line.empty()) continue;
    if (line.substr(0, 7) == "arch = ") {
      arch = std::string(Trim(line.substr(7)));
      continue;
    }
    if (line.substr(0, 9) == "code for ") {
      arch = std::string(Trim(line.substr(9)));
      continue;
    }
    if (line.substr(0, 8) == "Function") {
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      if (cur) {
        FindMainLoop(insts, *cur);
        Finish(*cur);
      }
      insts.clear();
      out.emplace_back();
      cur = &out.back();
      cur->name = std::string(Trim(line.substr(colon + 1)));
      cur->demangled = names::NormaliseKernelName(cur->name);
      cur->arch = arch;
      continue;
    }
    if (cur == nullptr || line.substr(0, 2) != "/*") continue;
    // "/*0090*/  @!P0 HMMA.16816.F32.BF16 R4, R8, R12, R4 ;  /* 0x... */"
    size_t close = line.find("*/");
    if (close == std::string_view::npos) continue;
    std::string_view rest = Trim(line.substr(close + 2));
    if (rest.empty() || rest.substr(0, 2) == "/*") continue;  // encoding-only line
    if (rest.front() == '{') rest = Trim(rest.substr(1));       // dual-issue braces
    if (!rest.empty() && rest.front() == '@') {                 // predicate
      size_t sp = rest.find(' ');
      if (sp == std::string_view::npos) continue;
      rest = Trim(rest.substr(sp));
    }
    size_t end = 0;
    while (end < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[end])) ||
                                 rest[end] == '_')) {
      ++end;
    }
    if (end == 0) continue;
    std::string_view op = rest.substr(0, end);
    size_t semi = rest.find(';');
    std::string_view full = rest.substr(0, semi == std::string_view::npos ? rest.size() : semi);
    ++cur->instructions;
    Inst inst{std::strtoull(std::string(line.substr(2, close - 2)).c_str(), nullptr, 16),
              op == "FFMA", -1};
    if (op == "BRA") {
      size_t hex = full.find("0x");
      if (hex != std::string_view::npos) {
        inst.branch_to = static_cast<int64_t>(
            std::strtoull(std::string(full.substr(hex + 2)).c_str(), nullptr, 16));
      }
    }
    insts.push_back(inst);
    switch (KindOf(op, full)) {
      case Kind::kTensor:
        ++cur->tensor_mma;
        ++cur->mma_opcodes[std::string(op)];
        break;
      case Kind::kFp32: ++cur->simt_fp32; break;
      case Kind::kFp16: ++cur->simt_fp16; break;
      case Kind::kFp64: ++cur->simt_fp64; break;
      case Kind::kInt: ++cur->simt_int; break;
      case Kind::kOther: break;
    }
  }
  if (cur) {
    FindMainLoop(insts, *cur);
    Finish(*cur);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        "not a SASS listing: no \"Function :\" line (expected cuobjdump --dump-sass output)");
  }
  return out;
}

absl::StatusOr<std::string> FindCuobjdump() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* path = std::getenv("PATH")) {
    std::string_view p(path);
    size_t start = 0;
    while (start <= p.size()) {
      size_t colon = p.find(':', start);
      if (colon == std::string_view::npos) colon = p.size();
      std::string dir(p.substr(start, colon - start));
      if (!dir.empty()) {
        fs::path cand = fs::path(dir) / "cuobjdump";
        if (access(cand.c_str(), X_OK) == 0) return cand.string();
      }
      start = colon + 1;
    }
  }
  if (access("/usr/local/cuda/bin/cuobjdump", X_OK) == 0) return "/usr/local/cuda/bin/cuobjdump";
  // The pip wheel nvidia-cuda-cuobjdump: <site-packages>/nvidia/cu*/bin/cuobjdump.
  FILE* p = popen("python3 -c 'import nvidia,os;print(os.path.dirname(nvidia.__path__[0]))' "
                  "2>/dev/null", "r");
  if (p != nullptr) {
    std::array<char, 4096> buf{};
    std::string site;
    while (fgets(buf.data(), buf.size(), p) != nullptr) site += buf.data();
    pclose(p);
    while (!site.empty() && std::isspace(static_cast<unsigned char>(site.back()))) site.pop_back();
    if (!site.empty()) {
      fs::path nv = fs::path(site) / "nvidia";
      for (const auto& e : fs::directory_iterator(nv, ec)) {
        fs::path cand = e.path() / "bin" / "cuobjdump";
        if (e.path().filename().string().rfind("cu", 0) == 0 && access(cand.c_str(), X_OK) == 0) {
          return cand.string();
        }
      }
    }
  }
  return absl::NotFoundError(
      "cuobjdump not found (looked in PATH, /usr/local/cuda/bin and python3's "
      "site-packages/nvidia/cu*/bin); install it with: pip install nvidia-cuda-cuobjdump");
}

absl::StatusOr<std::string> RunCuobjdump(const std::string& path) {
  if (access(path.c_str(), R_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot read file"));
  }
  ASSIGN_OR_RETURN(std::string tool, FindCuobjdump());
  std::string cmd = absl::StrCat(ShellQuote(tool), " --dump-sass ", ShellQuote(path), " 2>&1");
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return absl::InternalError(absl::StrCat("cannot run ", tool));
  std::string out;
  std::array<char, 65536> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int rc = pclose(p);
  if (rc != 0 || out.find("Function") == std::string::npos) {
    std::string first = out.substr(0, out.find('\n'));
    if (rc != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": cuobjdump failed (exit ", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, "): ", first));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no device code (SASS) found in this file"));
  }
  return out;
}

absl::StatusOr<std::vector<SassKernelStats>> SassStatsForFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, RunCuobjdump(path));
  auto stats = ParseSass(text);
  if (!stats.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", stats.status().message()));
  }
  return stats;
}

absl::StatusOr<std::vector<std::string>> CubinsUnder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> out;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(dir, ": cannot read folder: ", ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().extension() == ".cubin" && it->is_regular_file(ec)) {
      out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<SassOfPath> SassStatsForPath(const std::string& path) {
  namespace fs = std::filesystem;
  SassOfPath out;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    ASSIGN_OR_RETURN(out.stats, SassStatsForFile(path));
    out.files.push_back(path);
    return out;
  }
  ASSIGN_OR_RETURN(std::vector<std::string> cubins, CubinsUnder(path));
  if (cubins.empty()) {
    return absl::NotFoundError(absl::StrCat(
        path, ": no .cubin files in this folder or below (--sass takes a cubin, fatbin, "
              "executable or shared library, or a folder of cubins such as ~/.triton/cache)"));
  }
  for (const std::string& f : cubins) {
    auto stats = SassStatsForFile(f);
    if (!stats.ok()) {
      // cuobjdump cannot be run at all: every other cubin would fail the same way.
      if (stats.status().message().find("cuobjdump not found") != std::string_view::npos) {
        return stats.status();
      }
      out.skipped.push_back(std::string(stats.status().message()));
      continue;
    }
    out.stats.insert(out.stats.end(), stats->begin(), stats->end());
    out.files.push_back(f);
  }
  if (out.files.empty()) {
    return absl::NotFoundError(absl::StrCat(path, ": none of its ", cubins.size(),
                                            " cubins could be read; the first: ",
                                            out.skipped.front()));
  }
  return out;
}

}  // namespace qprof::sass
