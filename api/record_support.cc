#include "api/record_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "profiler/capture_range.h"

namespace qprof::api {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

absl::StatusOr<std::string> FindInjectLibrary(const std::string& exe_dir,
                                              const std::string& build_tree_path) {
  if (const char* env = std::getenv("QPROF_INJECT_LIB"); env != nullptr && env[0] != '\0') {
    if (IsFile(env)) return std::string(env);
    return absl::NotFoundError(absl::StrCat("QPROF_INJECT_LIB=", env, " does not exist"));
  }
  std::vector<std::string> tried = {exe_dir + "/" + kInjectLibraryName,
                                    exe_dir + "/../lib/" + kInjectLibraryName};
  if (!build_tree_path.empty()) tried.push_back(build_tree_path);
  for (const std::string& p : tried) {
    if (IsFile(p)) return p;
  }
  return absl::NotFoundError(absl::StrCat(
      kInjectLibraryName, " not found (looked at ", absl::StrJoin(tried, ", "),
      "); build the qprof_inject target (needs CUDA) or set QPROF_INJECT_LIB"));
}

LddResult ParseLdd(const std::string& ldd_output) {
  LddResult r;
  std::istringstream in(ldd_output);
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line);
    const size_t arrow = line.find(" => ");
    if (arrow == std::string::npos) continue;
    const std::string soname = Trim(line.substr(0, arrow));
    std::string rest = Trim(line.substr(arrow + 4));
    if (rest.rfind("not found", 0) == 0) {
      r.missing.push_back(soname);
      continue;
    }
    const size_t paren = rest.find(" (");
    if (paren != std::string::npos) rest = rest.substr(0, paren);
    r.found[soname] = Trim(rest);
  }
  return r;
}

absl::Status CheckDependencies(const std::string& library, const LddResult& ldd) {
  if (ldd.missing.empty()) return absl::OkStatus();
  bool cupti = false;
  for (const std::string& m : ldd.missing) cupti = cupti || m.rfind("libcupti", 0) == 0;
  std::string hint = cupti
      ? "CUPTI comes with the CUDA toolkit: add its folder (e.g. /usr/local/cuda/lib64 or "
        "/usr/local/cuda/extras/CUPTI/lib64) to LD_LIBRARY_PATH"
      : "add their folders to LD_LIBRARY_PATH";
  return absl::FailedPreconditionError(absl::StrCat(
      library, " cannot be loaded: ", absl::StrJoin(ldd.missing, ", "), " not found; ", hint));
}

std::map<std::string, std::string> RecordEnvironment(const RecordEnvOptions& o) {
  std::map<std::string, std::string> env;
  env["CUDA_INJECTION64_PATH"] = o.inject_library;
  if (o.nvtx) {
    // NVTX ranges reach CUPTI only through NVTX's own injection hook pointing at libcupti.
    if (!o.cupti_library.empty()) env["NVTX_INJECTION64_PATH"] = o.cupti_library;
  } else {
    // Tells the collector not to set NVTX_INJECTION64_PATH itself (it does when unset).
    env["QPROF_NVTX"] = "off";
  }
  env["QPROF_OUT_DIR"] = AbsolutePath(o.out_dir);
  env["QPROF_RUN_TOKEN"] = o.run_token;
  env["QPROF_MODE"] = o.metrics_pass ? "metrics" : "trace";
  if (o.duration_s > 0) env["QPROF_DURATION_S"] = absl::StrCat(o.duration_s);
  const CaptureOptions& c = o.capture;
  if (!c.capture_range.empty() && c.capture_range != "none") {
    env["QPROF_CAPTURE_RANGE"] = c.capture_range;
    if (!c.nvtx_capture.empty()) env["QPROF_NVTX_CAPTURE"] = c.nvtx_capture;
    env["QPROF_CAPTURE_RANGE_END"] = c.capture_range_end.empty() ? "stop-shutdown"
                                                                 : c.capture_range_end;
  }
  if (c.delay_s > 0) env["QPROF_DELAY_S"] = absl::StrCat(c.delay_s);
  return env;
}

absl::Status CheckCaptureOptions(const CaptureOptions& o) {
  profiler::CaptureSpec spec;
  std::string error;
  if (o.delay_s < 0) return absl::InvalidArgumentError("--delay must not be negative");
  const std::string range = o.capture_range.empty() ? "none" : o.capture_range;
  if (!profiler::ParseCaptureRange(range, &spec, &error)) return absl::InvalidArgumentError(error);
  if (!o.capture_range_end.empty() &&
      !profiler::ParseCaptureRangeEnd(o.capture_range_end, &spec, &error)) {
    return absl::InvalidArgumentError(error);
  }
  const bool nvtx = spec.trigger == profiler::CaptureSpec::Trigger::kNvtx;
  if (range == "nvtx") {
    if (o.nvtx_capture.empty()) {
      return absl::InvalidArgumentError(
          "--capture-range=nvtx needs --nvtx-capture=RANGE[@DOMAIN] (or "
          "--capture-range=nvtx:RANGE[@DOMAIN])");
    }
    if (!profiler::ParseNvtxCapture(o.nvtx_capture, &spec, &error)) {
      return absl::InvalidArgumentError(error);
    }
  } else if (!o.nvtx_capture.empty()) {
    return absl::InvalidArgumentError(
        nvtx ? "--nvtx-capture and --capture-range=nvtx:RANGE name the range twice: use one"
             : "--nvtx-capture needs --capture-range=nvtx");
  }
  if (!o.capture_range_end.empty() && spec.trigger == profiler::CaptureSpec::Trigger::kNone) {
    return absl::InvalidArgumentError("--capture-range-end needs --capture-range");
  }
  return absl::OkStatus();
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

std::string NewRunToken() {
  const uint64_t now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch()).count());
  std::mt19937_64 mix(now ^ (static_cast<uint64_t>(getpid()) << 32));
  return absl::StrCat(1000000000ull + mix() % 9000000000ull);
}

RunTraces ListRunTraces(const std::string& dir, const std::string& token, bool metrics) {
  RunTraces out;
  const std::string tail = "-" + token + (metrics ? ".metrics.qtrace" : ".qtrace");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("qprof-", 0) != 0) continue;
    std::string base = name;
    const bool cut = absl::EndsWith(base, ".partial");
    if (cut) base.resize(base.size() - 8);
    if (!absl::EndsWith(base, tail)) continue;
    // "qprof-<pid>" before the tail, the pid all digits.
    const std::string pid = base.substr(6, base.size() - 6 - tail.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    (cut ? out.cut : out.complete).insert(entry.path().string());
  }
  return out;
}

}  // namespace qprof::api
