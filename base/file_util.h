// File helpers shared by every writer in qprof.
//
// Contract: outputs are never half-written. WriteFileAtomic writes to a temporary file in
// the same directory (same filesystem, so rename(2) is atomic) and renames it over the
// destination only after the data is flushed; on any error the temporary is removed and
// the destination is untouched.
#ifndef QPROF_BASE_FILE_UTIL_H_
#define QPROF_BASE_FILE_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qprof {

// Whether `path` can name an output file: InvalidArgument "<path>: is a directory, not a
// file to write" when it names a folder, NotFound "<path>: folder <dir> does not exist" when
// its folder is missing. Every writer below checks it first, so the command line (which
// checks its outputs before any work) and the Python module word these errors alike.
absl::Status CheckOutputPath(const std::string& path);

// Writes `data` to `path` atomically (temp file + fsync + rename). Errors name `path`, the
// user's file, never the temporary.
absl::Status WriteFileAtomic(const std::string& path, std::string_view data);

// Several outputs of one command (--json, --html, --perfetto, ...) that appear together or
// not at all. Add() writes each to a temporary file next to its destination (flushed);
// Commit() renames them all. When an Add() fails, nothing is renamed: the destructor removes
// every temporary and no destination is touched. A rename failing midway (rare: the
// temporary is in the destination's folder) leaves the earlier files in place, and Commit's
// error names them.
class AtomicFileSet {
 public:
  AtomicFileSet() = default;
  AtomicFileSet(const AtomicFileSet&) = delete;
  AtomicFileSet& operator=(const AtomicFileSet&) = delete;
  ~AtomicFileSet();

  absl::Status Add(const std::string& path, std::string_view data);
  absl::Status Commit();
  // Destinations added so far, in order.
  std::vector<std::string> paths() const;

 private:
  struct Staged {
    std::string path, tmp;
  };
  std::vector<Staged> staged_;
};

// Reads a whole file. NotFound / PermissionDenied / Internal with the path in the message.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Creates a directory and its parents (like mkdir -p).
absl::Status MakeDirs(const std::string& path);

// A temporary path next to `path`, unique per process and call: "<path>.tmp.<pid>.<n>".
std::string TempPathFor(const std::string& path);

// Read-only memory map of a whole file. Movable, not copyable; unmaps on destruction.
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> Open(const std::string& path);
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const {
    return {reinterpret_cast<const char*>(data_), size_};
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace qprof

#endif  // QPROF_BASE_FILE_UTIL_H_
