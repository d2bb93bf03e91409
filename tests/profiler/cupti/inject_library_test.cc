// libqprof_inject.so: depends on the C/C++ runtime and libcupti only (no Abseil, no
// protobuf that could clash with the host's), exports exactly the injection entry point,
// and loading it and calling that entry on a machine without a GPU neither crashes nor
// fails the host.
// This test binary links no qprof library on purpose: like a real host process, it only
// sees what the injection library exports.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace {

std::string RunCapture(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), pipe) != nullptr) out += buf.data();
  pclose(pipe);
  return out;
}

TEST(InjectLibraryTest, ExportsOnlyInitializeInjection) {
  const std::string nm = RunCapture("nm -D --defined-only '" QPROF_INJECT_LIB "' 2>&1");
  ASSERT_FALSE(nm.empty());
  std::set<std::string> names;
  size_t pos = 0;
  while (pos < nm.size()) {
    size_t end = nm.find('\n', pos);
    if (end == std::string::npos) end = nm.size();
    std::string line = nm.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    names.insert(line.substr(line.rfind(' ') + 1));
  }
  EXPECT_EQ(names, std::set<std::string>{"InitializeInjection"}) << nm;
}

// The libraries `readelf -d` lists as NEEDED.
std::set<std::string> Needed(const std::string& readelf) {
  std::set<std::string> out;
  size_t pos = 0;
  while ((pos = readelf.find("Shared library: [", pos)) != std::string::npos) {
    pos += 17;
    out.insert(readelf.substr(pos, readelf.find(']', pos) - pos));
  }
  return out;
}

TEST(InjectLibraryTest, DependsOnTheCRuntimeAndLibcuptiOnly) {
  const std::string readelf = RunCapture("readelf -d '" QPROF_INJECT_LIB "' 2>&1");
  const std::set<std::string> needed = Needed(readelf);
  ASSERT_FALSE(needed.empty()) << readelf;
  EXPECT_EQ(needed.count("libcupti.so.13"), 1u) << readelf;
  const std::set<std::string> allowed = {"libcupti.so.13", "libstdc++.so.6", "libgcc_s.so.1",
                                         "libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"};
  for (const std::string& lib : needed) EXPECT_EQ(allowed.count(lib), 1u) << lib << "\n" << readelf;
  // A run path, if any, must not outrank LD_LIBRARY_PATH (RUNPATH does, RPATH does not).
  EXPECT_EQ(readelf.find("(RPATH)"), std::string::npos) << readelf;
  // Nothing of Abseil or protobuf, linked or imported.
  const std::string ldd = RunCapture("ldd '" QPROF_INJECT_LIB "' 2>&1");
  EXPECT_EQ(ldd.find("absl"), std::string::npos) << ldd;
  EXPECT_EQ(ldd.find("protobuf"), std::string::npos) << ldd;
  const std::string undefined = RunCapture("nm -D --undefined-only -C '" QPROF_INJECT_LIB "' 2>&1");
  EXPECT_EQ(undefined.find("absl"), std::string::npos) << undefined;
  EXPECT_EQ(undefined.find("google::protobuf"), std::string::npos) << undefined;
}

TEST(InjectLibraryTest, NoDriverMeansOneLineAndTheProgramGoesOn) {
  if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) != nullptr) {
    GTEST_SKIP() << "an NVIDIA driver is present; this checks the no-GPU path";
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // child: act as a host process the driver injected us into
    dup2(fds[1], 2);
    close(fds[0]);
    void* lib = dlopen(QPROF_INJECT_LIB, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      fprintf(stderr, "dlopen failed: %s\n", dlerror());
      _exit(3);
    }
    using Init = int (*)();
    auto init = reinterpret_cast<Init>(dlsym(lib, "InitializeInjection"));
    if (init == nullptr) _exit(4);
    _exit(init() == 1 ? 0 : 5);
  }
  close(fds[1]);
  std::string err;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) err.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the host process crashed; stderr: " << err;
  EXPECT_EQ(WEXITSTATUS(status), 0) << err;
  EXPECT_NE(err.find("qprof[inject]"), std::string::npos) << err;
  EXPECT_NE(err.find("no NVIDIA driver"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
