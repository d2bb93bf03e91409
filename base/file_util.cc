#include "base/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace qprof {
namespace {

absl::Status ErrnoStatus(std::string_view what, const std::string& path, int err) {
  std::string msg = absl::StrCat(path, ": ", std::string(what), ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  return absl::InternalError(msg);
}

}  // namespace

absl::Status CheckOutputPath(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty output file name");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a file to write"));
  }
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string dir = path.substr(0, slash);
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::NotFoundError(absl::StrCat(path, ": folder ", dir, " does not exist"));
    }
  }
  return absl::OkStatus();
}

std::string TempPathFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
}

namespace {

// Writes `data` to a new temporary next to `path` and flushes it; returns the temporary's
// name. Errors name `path`: the temporary is an implementation detail.
absl::StatusOr<std::string> WriteTemporary(const std::string& path, std::string_view data) {
  if (absl::Status st = CheckOutputPath(path); !st.ok()) return st;
  const std::string tmp = TempPathFor(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create", path, errno);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return ErrnoStatus("write failed", path, err);
    }
    done += static_cast<size_t>(n);
  }
  // fsync so that a crash after rename cannot leave an empty file behind the new name.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus("flush failed", path, err);
  }
  return tmp;
}

}  // namespace

absl::Status WriteFileAtomic(const std::string& path, std::string_view data) {
  auto tmp = WriteTemporary(path, data);
  if (!tmp.ok()) return tmp.status();
  if (::rename(tmp->c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp->c_str());
    return ErrnoStatus("rename failed", path, err);
  }
  return absl::OkStatus();
}

AtomicFileSet::~AtomicFileSet() {
  for (const Staged& s : staged_) ::unlink(s.tmp.c_str());
}

absl::Status AtomicFileSet::Add(const std::string& path, std::string_view data) {
  auto tmp = WriteTemporary(path, data);
  if (!tmp.ok()) return tmp.status();
  staged_.push_back({path, *std::move(tmp)});
  return absl::OkStatus();
}

absl::Status AtomicFileSet::Commit() {
  std::vector<std::string> written;
  for (size_t i = 0; i < staged_.size(); ++i) {
    if (::rename(staged_[i].tmp.c_str(), staged_[i].path.c_str()) != 0) {
      absl::Status st = ErrnoStatus("rename failed", staged_[i].path, errno);
      staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(i));
      std::string done = written.empty() ? "none of the outputs was written"
                                         : absl::StrCat("written before it: ",
                                                        absl::StrJoin(written, ", "));
      return absl::Status(st.code(), absl::StrCat(st.message(), " (", done, ")"));
    }
    written.push_back(staged_[i].path);
  }
  staged_.clear();
  return absl::OkStatus();
}

std::vector<std::string> AtomicFileSet::paths() const {
  std::vector<std::string> out;
  for (const Staged& s : staged_) out.push_back(s.path);
  return out;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoStatus("cannot open", path, errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::InternalError(absl::StrCat(path, ": read failed"));
  return ss.str();
}

absl::Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return absl::InternalError(absl::StrCat(path, ": cannot create directory: ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<MappedFile> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("cannot stat", path, err);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  MappedFile f;
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("cannot map", path, err);
    }
    f.data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file alive
  return f;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace qprof
