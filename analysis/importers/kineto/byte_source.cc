#include "analysis/importers/kineto/byte_source.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace qprof::importers {
namespace {

bool IsGzip(const unsigned char* p, size_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

// Raw bytes: a FILE or a memory span.
class RawSource {
 public:
  virtual ~RawSource() = default;
  virtual size_t Read(char* out, size_t n) = 0;  // 0 at end
  virtual bool failed() const { return false; }
};

class FileRaw : public RawSource {
 public:
  explicit FileRaw(std::FILE* f) : f_(f) {}
  ~FileRaw() override { std::fclose(f_); }
  size_t Read(char* out, size_t n) override { return std::fread(out, 1, n, f_); }
  bool failed() const override { return std::ferror(f_) != 0; }

 private:
  std::FILE* f_;
};

class MemRaw : public RawSource {
 public:
  explicit MemRaw(std::string_view d) : d_(d) {}
  size_t Read(char* out, size_t n) override {
    n = std::min(n, d_.size() - pos_);
    std::memcpy(out, d_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string_view d_;
  size_t pos_ = 0;
};

class PlainSource : public ByteSource {
 public:
  PlainSource(std::unique_ptr<RawSource> raw, std::string label, uint64_t total, std::string head)
      : raw_(std::move(raw)), label_(std::move(label)), total_(total), head_(std::move(head)) {}
  absl::StatusOr<size_t> Read(char* out, size_t n) override {
    size_t got = 0;
    if (head_pos_ < head_.size()) {
      got = std::min(n, head_.size() - head_pos_);
      std::memcpy(out, head_.data() + head_pos_, got);
      head_pos_ += got;
    }
    if (got < n) got += raw_->Read(out + got, n - got);
    if (raw_->failed()) return absl::DataLossError(absl::StrCat(label_, ": read error"));
    consumed_ += got;
    return got;
  }
  uint64_t consumed() const override { return consumed_; }
  uint64_t total() const override { return total_; }

 private:
  std::unique_ptr<RawSource> raw_;
  std::string label_;
  uint64_t total_;
  std::string head_;
  size_t head_pos_ = 0;
  uint64_t consumed_ = 0;
};

// zlib inflate with automatic gzip header handling (windowBits 15 + 32); at the end of a
// member, continues with the next one if more input follows.
class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<RawSource> raw, std::string label, uint64_t total, std::string head)
      : raw_(std::move(raw)), label_(std::move(label)), total_(total), in_(1 << 20) {
    std::memset(&z_, 0, sizeof(z_));
    std::memcpy(in_.data(), head.data(), head.size());
    z_.next_in = in_.data();
    z_.avail_in = static_cast<uInt>(head.size());
    ok_ = inflateInit2(&z_, 15 + 32) == Z_OK;
  }
  ~GzipSource() override { inflateEnd(&z_); }

  // Bytes inflated before an error are handed out first and the error on the next call, so
  // what a reader sees before a cut or corruption never depends on its read sizes.
  absl::StatusOr<size_t> Read(char* out, size_t n) override {
    if (!pending_.ok()) return pending_;
    size_t produced = 0;
    absl::Status s = Inflate(out, n, &produced);
    if (s.ok()) return produced;
    if (produced == 0) return s;
    pending_ = s;
    return produced;
  }

 private:
  absl::Status Inflate(char* out, size_t n, size_t* produced_out) {
    if (!ok_) return absl::InternalError(absl::StrCat(label_, ": zlib init failed"));
    size_t& produced = *produced_out;
    while (produced < n && !done_) {
      if (z_.avail_in == 0 && !raw_eof_) {
        size_t got = raw_->Read(reinterpret_cast<char*>(in_.data()), in_.size());
        if (raw_->failed()) return absl::DataLossError(absl::StrCat(label_, ": read error"));
        if (got == 0) raw_eof_ = true;
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(got);
      }
      if (z_.avail_in == 0 && raw_eof_) {
        if (in_member_) {
          return absl::DataLossError(absl::StrCat(
              label_, ": truncated gzip stream (ended at compressed byte ", compressed_, ")"));
        }
        done_ = true;
        break;
      }
      if (!in_member_ && members_ > 0 && z_.next_in[0] != 0x1f) {
        done_ = true;  // trailing bytes after the last member (padding): ignored
        break;
      }
      z_.next_out = reinterpret_cast<Bytef*>(out + produced);
      z_.avail_out = static_cast<uInt>(n - produced);
      uInt before_in = z_.avail_in;
      int rc = inflate(&z_, Z_NO_FLUSH);
      compressed_ += before_in - z_.avail_in;
      produced = n - z_.avail_out;
      in_member_ = true;
      if (rc == Z_STREAM_END) {
        in_member_ = false;
        ++members_;
        inflateReset(&z_);
      } else if (rc == Z_BUF_ERROR) {
        // No progress: fine when the output is full or the input is used up (refill).
        if (z_.avail_out != 0 && z_.avail_in != 0) {
          return absl::DataLossError(
              absl::StrCat(label_, ": corrupt gzip stream at compressed byte ", compressed_));
        }
      } else if (rc != Z_OK) {
        return absl::DataLossError(absl::StrCat(label_, ": corrupt gzip stream at compressed byte ",
                                                compressed_, " (", z_.msg ? z_.msg : "zlib error",
                                                ")"));
      }
    }
    return absl::OkStatus();
  }

 public:
  uint64_t consumed() const override { return compressed_; }
  uint64_t total() const override { return total_; }

 private:
  absl::Status pending_;
  std::unique_ptr<RawSource> raw_;
  std::string label_;
  uint64_t total_;
  std::vector<unsigned char> in_;
  bool raw_eof_ = false;
  int members_ = 0;
  bool in_member_ = false;
  bool done_ = false;
  bool ok_ = false;
  uint64_t compressed_ = 0;
  z_stream z_;
};

std::unique_ptr<ByteSource> Wrap(std::unique_ptr<RawSource> raw, const std::string& label,
                                 uint64_t total) {
  std::string head(2, '\0');
  head.resize(raw->Read(head.data(), 2));
  if (IsGzip(reinterpret_cast<const unsigned char*>(head.data()), head.size())) {
    return std::make_unique<GzipSource>(std::move(raw), label, total, std::move(head));
  }
  return std::make_unique<PlainSource>(std::move(raw), label, total, std::move(head));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  struct stat st;
  uint64_t total = ::fstat(fileno(f), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  return Wrap(std::make_unique<FileRaw>(f), path, total);
}

std::unique_ptr<ByteSource> MemoryByteSource(std::string_view data, const std::string& label) {
  return Wrap(std::make_unique<MemRaw>(data), label, data.size());
}

}  // namespace qprof::importers
