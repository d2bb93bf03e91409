#include "analysis/importers/qtrace/qtrace_importer.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/importers/common/import_util.h"
#include "base/status_macros.h"
#include "proto/vocabulary.h"

namespace qprof::importers {
namespace {

// As in proto/trace_io.cc: a frame larger than this is corruption, not data.
constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 30;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Reads frames of a .qtrace file in order, keeping one frame in memory.
class FrameReader {
 public:
  FrameReader(std::FILE* f, uint64_t size) : f_(f), size_(size) {}
  uint64_t pos() const { return pos_; }
  uint64_t size() const { return size_; }
  bool at_end() const { return pos_ >= size_; }

  // The next frame's bytes; false with *stop set when the rest is not a whole frame.
  bool Next(std::string* frame, std::string* stop) {
    const uint64_t frame_start = pos_;
    uint64_t len = 0;
    int shift = 0;
    while (true) {
      int c = std::fgetc(f_);
      if (c == EOF || shift >= 64) {
        *stop = absl::StrCat("stopped at byte ", frame_start, ": frame length cut off");
        return false;
      }
      ++pos_;
      len |= static_cast<uint64_t>(c & 0x7F) << shift;
      shift += 7;
      if ((c & 0x80) == 0) break;
    }
    if (len > kMaxFrameBytes || len > size_ - pos_) {
      *stop = absl::StrCat("stopped at byte ", frame_start, ": frame length ", len,
                           len > kMaxFrameBytes ? " is implausible" : " exceeds the ",
                           len > kMaxFrameBytes ? "" : absl::StrCat(size_ - pos_, " bytes left"));
      return false;
    }
    frame->resize(len);
    if (len > 0 && std::fread(frame->data(), 1, len, f_) != len) {
      *stop = absl::StrCat("stopped at byte ", frame_start, ": read error");
      return false;
    }
    pos_ += len;
    frame_start_ = frame_start;
    return true;
  }
  uint64_t frame_start() const { return frame_start_; }

 private:
  std::FILE* f_;
  uint64_t size_;
  uint64_t pos_ = kTraceMagic.size();
  uint64_t frame_start_ = 0;
};

// The header as the analysis sees it: read from this file, noting what it was converted from.
proto::TraceHeader AsRead(proto::TraceHeader h, const std::string& path) {
  if (!h.source_kind().empty() && h.source_kind() != "qtrace") {
    h.add_notes(absl::StrCat("converted from ", h.source_kind(), " ", h.source_path()));
  }
  h.set_source_path(path);
  h.set_source_kind("qtrace");
  return h;
}

}  // namespace

namespace {

// The frames after the magic: a header, chunks, a footer; each checked as ReadTrace does.
class QtraceFrames {
 public:
  QtraceFrames(const std::string& path, TraceSink* sink) : path_(path), sink_(sink) {}

  // One parsed frame; an error for a frame that breaks the layout.
  absl::Status Take(const proto::TraceFrame& frame, const FrameReader& reader) {
    if (!have_header_) {
      if (!frame.has_header()) {
        return absl::DataLossError(absl::StrCat(path_, ": the first frame (byte ",
                                                reader.frame_start(), ") is not a header"));
      }
      header_ = AsRead(frame.header(), path_);
      have_header_ = true;
      sink_->Begin(header_);
    } else if (frame.has_chunk()) {
      for (const proto::Activity& a : frame.chunk().activities()) sink_->Activity(a);
      for (const proto::NvtxRange& r : frame.chunk().ranges()) sink_->Range(r);
      activities_ += static_cast<uint64_t>(frame.chunk().activities_size());
    } else if (frame.has_footer()) {
      const proto::TraceFooter& ft = frame.footer();
      if (ft.has_collector()) *header_.mutable_collector() = ft.collector();
      if (ft.has_run()) *header_.mutable_run() = ft.run();
      footer_count_ = ft.activity_count();
      have_footer_ = true;
      if (!reader.at_end()) {
        return absl::DataLossError(absl::StrCat(path_, ": ", reader.size() - reader.pos(),
                                                " unexpected bytes after the footer at byte ",
                                                reader.pos()));
      }
    } else {
      return absl::DataLossError(absl::StrCat(path_, ": frame at byte ", reader.frame_start(),
                                              " is empty or of an unknown kind"));
    }
    return absl::OkStatus();
  }

  // After the last frame; `stop` says why reading stopped early ("" at the end of the file).
  absl::Status Finish(const std::string& stop, uint64_t size) {
    if (!have_header_) {
      return absl::DataLossError(absl::StrCat(path_, ": trace cut inside its header",
                                              stop.empty() ? "" : " (", stop,
                                              stop.empty() ? "" : ")"));
    }
    if (have_footer_) {
      if (footer_count_ != activities_) {
        return absl::DataLossError(absl::StrCat(path_, ": footer counts ", footer_count_,
                                                " activities but the chunks hold ", activities_));
      }
      sink_->End(header_, false, "");
      return absl::OkStatus();
    }
    std::string detail =
        stop.empty() ? absl::StrCat("no footer: the file ends after a whole frame at byte ", size)
                     : stop;
    header_.mutable_collector()->add_warnings(absl::StrCat(
        path_, ": truncated trace read up to its last whole frame (", detail, ")"));
    sink_->End(header_, true, detail);
    return absl::OkStatus();
  }

 private:
  const std::string& path_;
  TraceSink* sink_;
  proto::TraceHeader header_;
  bool have_header_ = false, have_footer_ = false;
  uint64_t activities_ = 0, footer_count_ = 0;
};

}  // namespace

absl::Status StreamQtrace(const std::string& path, const ImportOptions& options, TraceSink* sink) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  struct stat st;
  if (!f || ::fstat(fileno(f.get()), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": empty file, not a .qtrace trace"));
  }
  std::string magic(kTraceMagic.size(), '\0');
  size_t got = std::fread(magic.data(), 1, magic.size(), f.get());
  if (std::memcmp(magic.data(), kTraceMagic.data(), got) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a .qtrace trace (the file does not start with \"", std::string(kTraceMagic), "\")"));
  }
  if (got < magic.size()) {
    return absl::DataLossError(absl::StrCat(path, ": trace cut inside its header (", size, " bytes)"));
  }
  FrameReader reader(f.get(), size);
  QtraceFrames frames(path, sink);
  Progress progress(options.progress, "reading " + path);
  std::string bytes, stop;
  proto::TraceFrame frame;
  while (!reader.at_end()) {
    if (!reader.Next(&bytes, &stop)) break;
    if (!frame.ParseFromString(bytes)) {
      stop = absl::StrCat("stopped at byte ", reader.frame_start(), ": frame does not parse");
      break;
    }
    progress.UpdateNow(reader.pos(), size, "bytes");
    RETURN_IF_ERROR(frames.Take(frame, reader));
  }
  progress.Finish();
  return frames.Finish(stop, size);
}

absl::StatusOr<proto::Trace> ImportQtrace(const std::string& path, const ImportOptions& options) {
  TraceBuilder builder(/*sort=*/false);
  RETURN_IF_ERROR(StreamQtrace(path, options, &builder));
  return builder.Take();
}

}  // namespace qprof::importers
