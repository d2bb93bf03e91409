#include "proto/trace_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "proto/vocabulary.h"

namespace qprof {
namespace {

// A frame larger than this is corruption, not data: chunks hold a few thousand records
// (~1 MB). The guard keeps a flipped length byte from turning into a huge allocation.
constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 30;

absl::Status IoError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(path, ": ", what, ": ", std::strerror(errno)));
}

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Decodes a varint at data[*pos, end). Returns false if the bytes end first or the
// varint runs past 10 bytes.
bool ReadVarint(const uint8_t* data, size_t end, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= end) return false;
    const uint8_t b = data[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Open(const std::string& path) {
  const std::string partial = path + ".partial";
  std::FILE* f = std::fopen(partial.c_str(), "wb");
  if (f == nullptr) return IoError("cannot create", path);
  if (std::fwrite(kTraceMagic.data(), 1, kTraceMagic.size(), f) != kTraceMagic.size()) {
    std::fclose(f);
    return IoError("write failed", path);
  }
  return std::unique_ptr<TraceWriter>(new TraceWriter(path, f));
}

TraceWriter::~TraceWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status TraceWriter::WriteFrame(const proto::TraceFrame& frame) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": trace writer is closed"));
  }
  std::string bytes;
  AppendVarint(frame.ByteSizeLong(), &bytes);
  if (!frame.AppendToString(&bytes)) {
    return absl::InternalError(absl::StrCat(path_, ": cannot serialize trace frame"));
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return IoError("write failed", path_);
  }
  return absl::OkStatus();
}

absl::Status TraceWriter::WriteHeader(const proto::TraceHeader& header) {
  if (header_written_) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": trace header written twice"));
  }
  proto::TraceFrame frame;
  *frame.mutable_header() = header;
  RETURN_IF_ERROR(WriteFrame(frame));
  header_written_ = true;
  // Flushed so that a crash right after start still leaves a readable (empty) trace.
  std::fflush(file_);
  return absl::OkStatus();
}

absl::Status TraceWriter::WriteChunk(const proto::TraceChunk& chunk) {
  if (!header_written_) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": trace chunk written before the header"));
  }
  proto::TraceFrame frame;
  *frame.mutable_chunk() = chunk;
  RETURN_IF_ERROR(WriteFrame(frame));
  activities_written_ += static_cast<uint64_t>(chunk.activities_size());
  // Whole chunks reach the OS as they are written: a killed process loses at most the
  // chunk being written, which the reader then reports as truncation.
  std::fflush(file_);
  return absl::OkStatus();
}

absl::Status TraceWriter::Close(const proto::TraceFooter& footer) {
  if (!header_written_) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": trace closed before the header was written"));
  }
  proto::TraceFrame frame;
  *frame.mutable_footer() = footer;
  // The footer's count is what the reader checks the chunks against, so it is always the
  // number actually written.
  frame.mutable_footer()->set_activity_count(activities_written_);
  RETURN_IF_ERROR(WriteFrame(frame));
  const std::string partial = path_ + ".partial";
  const bool flushed = std::fflush(file_) == 0 && ::fsync(fileno(file_)) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) return IoError("flush failed", path_);
  if (std::rename(partial.c_str(), path_.c_str()) != 0) return IoError("rename failed", path_);
  return absl::OkStatus();
}

absl::Status WriteTrace(const proto::Trace& trace, const std::string& path, int chunk_size) {
  if (chunk_size <= 0) chunk_size = 4096;
  ASSIGN_OR_RETURN(auto writer, TraceWriter::Open(path));
  RETURN_IF_ERROR(writer->WriteHeader(trace.header()));
  const int n_act = trace.activities_size();
  const int n_ranges = trace.ranges_size();
  for (int a = 0, r = 0; a < n_act || r < n_ranges; a += chunk_size, r += chunk_size) {
    proto::TraceChunk chunk;
    for (int i = a; i < std::min(n_act, a + chunk_size); ++i) {
      *chunk.add_activities() = trace.activities(i);
    }
    for (int i = r; i < std::min(n_ranges, r + chunk_size); ++i) {
      *chunk.add_ranges() = trace.ranges(i);
    }
    RETURN_IF_ERROR(writer->WriteChunk(chunk));
  }
  proto::TraceFooter footer;
  if (trace.header().has_collector()) *footer.mutable_collector() = trace.header().collector();
  if (trace.header().has_run()) *footer.mutable_run() = trace.header().run();
  return writer->Close(footer);
}

bool LooksLikeQtrace(const std::string& first_bytes) {
  return first_bytes.size() >= kTraceMagic.size() &&
         std::string_view(first_bytes).substr(0, kTraceMagic.size()) == kTraceMagic;
}

namespace {

// Reads the frame at *pos (advancing it); false with *stop saying why when the rest of the
// file is not a whole frame (a cut or corrupt tail: the trace is truncated there).
bool ReadFrame(const uint8_t* data, size_t size, size_t* pos, proto::TraceFrame* frame,
               std::string* stop) {
  const size_t frame_start = *pos;
  uint64_t len = 0;
  if (!ReadVarint(data, size, pos, &len)) {
    *stop = absl::StrCat("stopped at byte ", frame_start, ": frame length cut off");
    return false;
  }
  if (len > kMaxFrameBytes || len > size - *pos) {
    *stop = absl::StrCat("stopped at byte ", frame_start, ": frame length ", len,
                         len > kMaxFrameBytes ? " is implausible" : " exceeds the ",
                         len > kMaxFrameBytes ? "" : absl::StrCat(size - *pos, " bytes left"));
    return false;
  }
  if (!frame->ParseFromArray(data + *pos, static_cast<int>(len))) {
    *stop = absl::StrCat("stopped at byte ", frame_start, ": frame does not parse");
    return false;
  }
  *pos += len;
  return true;
}

// What the frames after the header add up to.
struct FrameState {
  bool have_footer = false;
  uint64_t footer_count = 0;
};

// Folds a chunk or the footer into `trace`; DataLoss for anything else, or for bytes
// after the footer (which ends at `pos` of a `size`-byte file).
absl::Status AddFrame(const std::string& path, proto::TraceFrame* frame, size_t frame_start,
                      size_t pos, size_t size, proto::Trace* trace, FrameState* state) {
  if (frame->has_chunk()) {
    auto* chunk = frame->mutable_chunk();
    for (auto& a : *chunk->mutable_activities()) *trace->add_activities() = std::move(a);
    for (auto& r : *chunk->mutable_ranges()) *trace->add_ranges() = std::move(r);
    return absl::OkStatus();
  }
  if (!frame->has_footer()) {
    return absl::DataLossError(
        absl::StrCat(path, ": frame at byte ", frame_start, " is empty or of an unknown kind"));
  }
  const auto& f = frame->footer();
  if (f.has_collector()) *trace->mutable_header()->mutable_collector() = f.collector();
  if (f.has_run()) *trace->mutable_header()->mutable_run() = f.run();
  state->footer_count = f.activity_count();
  state->have_footer = true;
  if (pos != size) {
    return absl::DataLossError(
        absl::StrCat(path, ": ", size - pos, " unexpected bytes after the footer at byte ", pos));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<proto::Trace> ReadTrace(const std::string& path) {
  ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  const uint8_t* data = file.data();
  const size_t size = file.size();
  if (size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": empty file, not a .qtrace trace"));
  }
  const size_t magic_len = kTraceMagic.size();
  if (std::memcmp(data, kTraceMagic.data(), std::min(size, magic_len)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a .qtrace trace (the file does not start with \"", std::string(kTraceMagic), "\")"));
  }
  if (size < magic_len) {
    return absl::DataLossError(
        absl::StrCat(path, ": trace cut inside its header (", size, " bytes)"));
  }
  proto::Trace trace;
  size_t pos = magic_len;
  bool have_header = false;
  FrameState state;
  std::string stop;  // why reading stopped before a footer
  while (pos < size) {
    const size_t frame_start = pos;
    proto::TraceFrame frame;
    if (!ReadFrame(data, size, &pos, &frame, &stop)) break;
    if (have_header) {
      RETURN_IF_ERROR(AddFrame(path, &frame, frame_start, pos, size, &trace, &state));
      continue;
    }
    if (!frame.has_header()) {
      return absl::DataLossError(
          absl::StrCat(path, ": the first frame (byte ", frame_start, ") is not a header"));
    }
    *trace.mutable_header() = std::move(*frame.mutable_header());
    have_header = true;
  }
  if (!have_header) {
    return absl::DataLossError(absl::StrCat(
        path, ": trace cut inside its header", stop.empty() ? "" : " (", stop,
        stop.empty() ? "" : ")"));
  }
  if (state.have_footer) {
    if (state.footer_count != static_cast<uint64_t>(trace.activities_size())) {
      return absl::DataLossError(absl::StrCat(path, ": footer counts ", state.footer_count,
                                              " activities but the chunks hold ",
                                              trace.activities_size()));
    }
    return trace;
  }
  trace.set_truncated(true);
  trace.set_truncation_detail(
      stop.empty() ? absl::StrCat("no footer: the file ends after a whole frame at byte ", size)
                   : stop);
  return trace;
}

}  // namespace qprof
