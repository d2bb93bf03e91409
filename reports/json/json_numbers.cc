#include "reports/json/json_numbers.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace qprof::reports {
namespace {

namespace pb = google::protobuf;

// What a JSON value stands for, as far as quoting goes.
struct Context {
  enum Kind { kOther, kMessage, kInt64, kMap } kind = kOther;
  bool unbounded = false;  // kInt64 of a `*_unix_ns` instant: beyond 2^53 allowed
  const pb::Descriptor* message = nullptr;      // kMessage
  const pb::FieldDescriptor* map_value = nullptr;  // kMap: the entry's value field
};

// The context of one element of field `f` (for a repeated field: of each array element).
Context ElementContext(const pb::FieldDescriptor* f) {
  Context c;
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      c.kind = Context::kInt64;
      c.unbounded = IsUnixInstantField(f);
      break;
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
      const std::string& name = f->message_type()->full_name();
      if (name == "google.protobuf.Int64Value" || name == "google.protobuf.UInt64Value") {
        c.kind = Context::kInt64;
      } else if (name.rfind("google.protobuf.", 0) != 0) {
        // Well-known types have JSON forms of their own (Struct, Timestamp, ...): kept as is.
        c.kind = Context::kMessage;
        c.message = f->message_type();
      }
      break;
    }
    default:
      break;
  }
  return c;
}

Context FieldContext(const pb::FieldDescriptor* f) {
  if (f->is_map()) {
    Context c;
    c.kind = Context::kMap;
    c.map_value = f->message_type()->map_value();
    return c;
  }
  return ElementContext(f);
}

const pb::FieldDescriptor* FindField(const pb::Descriptor* m, std::string_view key) {
  const pb::FieldDescriptor* f = m->FindFieldByName(std::string(key));
  if (f != nullptr) return f;
  for (int i = 0; i < m->field_count(); ++i) {
    if (m->field(i)->json_name() == key) return m->field(i);
  }
  return nullptr;
}

// A recursive-descent walk over well-formed JSON (protobuf's own output) that copies it to
// `out_`, unquoting the strings found in kInt64 contexts.
class Rewriter {
 public:
  explicit Rewriter(std::string_view in) : in_(in) { out_.reserve(in.size()); }

  absl::Status Run(const Context& root) {
    RETURN_IF_ERROR(Value(root));
    Space();
    if (pos_ != in_.size()) return Bad("text after the value");
    return absl::OkStatus();
  }
  std::string Take() { return std::move(out_); }

 private:
  absl::Status Bad(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON number rewrite: ", std::string(what), " at byte ", pos_, " (", Path(), ")"));
  }
  std::string Path() const { return path_.empty() ? "top level" : absl::StrJoin(path_, ""); }

  void Space() {
    while (pos_ < in_.size() &&
           (in_[pos_] == ' ' || in_[pos_] == '\n' || in_[pos_] == '\r' || in_[pos_] == '\t')) {
      out_.push_back(in_[pos_++]);
    }
  }

  // Reads a string token starting at '"'; returns its raw text (quotes included).
  absl::StatusOr<std::string_view> StringToken() {
    size_t start = pos_++;
    while (pos_ < in_.size() && in_[pos_] != '"') pos_ += in_[pos_] == '\\' ? 2 : 1;
    if (pos_ >= in_.size()) return Bad("unterminated string");
    ++pos_;
    return in_.substr(start, pos_ - start);
  }

  absl::Status Value(const Context& c) {
    Space();
    if (pos_ >= in_.size()) return Bad("value expected");
    switch (in_[pos_]) {
      case '{': return Object(c);
      case '[': return Array(c);
      case '"': return String(c);
      default: {
        size_t start = pos_;
        while (pos_ < in_.size() && std::string_view(",]} \n\r\t").find(in_[pos_]) ==
                                        std::string_view::npos) {
          ++pos_;
        }
        if (pos_ == start) return Bad("value expected");
        out_.append(in_.substr(start, pos_ - start));
        return absl::OkStatus();
      }
    }
  }

  absl::Status String(const Context& c) {
    auto tok = StringToken();
    if (!tok.ok()) return tok.status();
    if (c.kind != Context::kInt64) {
      out_.append(*tok);
      return absl::OkStatus();
    }
    std::string_view digits = tok->substr(1, tok->size() - 2);
    std::string_view magnitude = digits;
    if (!magnitude.empty() && magnitude.front() == '-') magnitude.remove_prefix(1);
    uint64_t v = 0;
    if (magnitude.empty() ||
        magnitude.find_first_not_of("0123456789") != std::string_view::npos ||
        !absl::SimpleAtoi(absl::string_view(magnitude.data(), magnitude.size()), &v)) {
      return Bad(absl::StrCat("64-bit integer expected, found ", std::string(*tok)));
    }
    // Beyond 2^53 (only a trace whose timestamps span over 104 days, which the analysis
    // warns about): still written, exact in the text, rather than losing the whole report.
    if (v > kMaxJsonSafeInteger && !c.unbounded && digits.front() == '-') {
      return absl::OutOfRangeError(absl::StrCat(
          Path(), " = ", std::string(digits), " is below -2^53, which JSON readers cannot hold exactly"));
    }
    out_.append(digits);
    return absl::OkStatus();
  }

  absl::Status Array(const Context& c) {
    out_.push_back(in_[pos_++]);
    Space();
    if (pos_ < in_.size() && in_[pos_] == ']') {
      out_.push_back(in_[pos_++]);
      return absl::OkStatus();
    }
    for (size_t i = 0;; ++i) {
      path_.push_back(absl::StrCat("[", i, "]"));
      RETURN_IF_ERROR(Value(c));
      path_.pop_back();
      Space();
      if (pos_ >= in_.size()) return Bad("unterminated array");
      char ch = in_[pos_];
      out_.push_back(in_[pos_++]);
      if (ch == ']') return absl::OkStatus();
      if (ch != ',') return Bad("',' or ']' expected");
    }
  }

  absl::Status Object(const Context& c) {
    out_.push_back(in_[pos_++]);
    Space();
    if (pos_ < in_.size() && in_[pos_] == '}') {
      out_.push_back(in_[pos_++]);
      return absl::OkStatus();
    }
    for (;;) {
      Space();
      if (pos_ >= in_.size() || in_[pos_] != '"') return Bad("key expected");
      auto key = StringToken();
      if (!key.ok()) return key.status();
      out_.append(*key);
      std::string_view name = key->substr(1, key->size() - 2);
      Space();
      if (pos_ >= in_.size() || in_[pos_] != ':') return Bad("':' expected");
      out_.push_back(in_[pos_++]);
      Context value;  // kOther unless the descriptor says otherwise
      if (c.kind == Context::kMessage) {
        if (const pb::FieldDescriptor* f = FindField(c.message, name)) value = FieldContext(f);
      } else if (c.kind == Context::kMap) {
        value = ElementContext(c.map_value);
      }
      bool map_key = c.kind == Context::kMap;
      path_.push_back(map_key ? absl::StrCat("[\"", std::string(name), "\"]")
                              : absl::StrCat(path_.empty() ? "" : ".", std::string(name)));
      RETURN_IF_ERROR(Value(value));
      path_.pop_back();
      Space();
      if (pos_ >= in_.size()) return Bad("unterminated object");
      char ch = in_[pos_];
      out_.push_back(in_[pos_++]);
      if (ch == '}') return absl::OkStatus();
      if (ch != ',') return Bad("',' or '}' expected");
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
  std::string out_;
  std::vector<std::string> path_;
};

}  // namespace

bool IsUnixInstantField(const pb::FieldDescriptor* field) {
  const std::string& n = field->name();
  constexpr std::string_view kSuffix = "_unix_ns";
  return n.size() > kSuffix.size() && n.compare(n.size() - kSuffix.size(), kSuffix.size(),
                                                kSuffix.data()) == 0;
}

absl::StatusOr<std::string> Int64FieldsAsNumbers(const pb::Descriptor* type,
                                                 std::string_view json) {
  Context root;
  root.kind = Context::kMessage;
  root.message = type;
  Rewriter r(json);
  absl::Status s = r.Run(root);
  if (!s.ok()) return s;
  return r.Take();
}

}  // namespace qprof::reports
