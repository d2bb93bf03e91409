#include "reports/json/json_schema.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/text.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"
#include "proto/vocabulary.h"
#include "reports/json/json_numbers.h"

namespace qprof::reports {
namespace {

namespace pb = google::protobuf;

// A JSON value with its keys in insertion order (std::map would sort them).
struct Node {
  enum Kind { kObject, kArray, kRaw } kind = kObject;
  std::vector<std::pair<std::string, Node>> members;
  std::vector<Node> items;
  std::string raw;  // already-encoded scalar: "\"text\"", "0", "false"

  Node& Set(const std::string& key, Node value) {
    members.emplace_back(key, std::move(value));
    return *this;
  }
};

Node Raw(std::string s) {
  Node n;
  n.kind = Node::kRaw;
  n.raw = std::move(s);
  return n;
}
Node Str(std::string_view s) { return Raw(JsonQuote(s)); }
Node Array(std::vector<Node> items) {
  Node n;
  n.kind = Node::kArray;
  n.items = std::move(items);
  return n;
}
Node Ref(const std::string& def) { return Node().Set("$ref", Str("#/$defs/" + def)); }

bool AllRaw(const std::vector<Node>& items) {
  for (const Node& n : items) {
    if (n.kind != Node::kRaw) return false;
  }
  return true;
}

void Print(const Node& n, int indent, std::string* out) {
  const std::string pad(indent + 2, ' ');
  switch (n.kind) {
    case Node::kRaw:
      *out += n.raw;
      return;
    case Node::kArray:
      if (AllRaw(n.items)) {  // short lists (enum names, required keys) on one line
        *out += "[";
        for (size_t i = 0; i < n.items.size(); ++i) *out += (i ? ", " : "") + n.items[i].raw;
        *out += "]";
        return;
      }
      *out += "[\n";
      for (size_t i = 0; i < n.items.size(); ++i) {
        *out += pad;
        Print(n.items[i], indent + 2, out);
        *out += i + 1 < n.items.size() ? ",\n" : "\n";
      }
      *out += std::string(indent, ' ') + "]";
      return;
    case Node::kObject:
      if (n.members.empty()) {
        *out += "{}";
        return;
      }
      *out += "{\n";
      for (size_t i = 0; i < n.members.size(); ++i) {
        *out += pad + JsonQuote(n.members[i].first) + ": ";
        Print(n.members[i].second, indent + 2, out);
        *out += i + 1 < n.members.size() ? ",\n" : "\n";
      }
      *out += std::string(indent, ' ') + "}";
      return;
  }
}

class SchemaBuilder {
 public:
  // The schema of one value of field `f` (an array element for repeated fields).
  Node Element(const pb::FieldDescriptor* f) {
    using FD = pb::FieldDescriptor;
    const std::string max53 = absl::StrCat(kMaxJsonSafeInteger);
    switch (f->cpp_type()) {
      case FD::CPPTYPE_INT32:
        return Node().Set("type", Str("integer"));
      case FD::CPPTYPE_UINT32:
        return Node().Set("type", Str("integer")).Set("minimum", Raw("0"));
      case FD::CPPTYPE_INT64:
        return Node()
            .Set("type", Str("integer"))
            .Set("minimum", Raw("-" + max53))
            .Set("maximum", Raw(max53));
      case FD::CPPTYPE_UINT64:
        if (IsUnixInstantField(f)) {
          return Node()
              .Set("type", Str("integer"))
              .Set("minimum", Raw("0"))
              .Set("description", Str("nanoseconds since the Unix epoch: beyond 2^53, a reader "
                                      "that parses doubles gets it to within 256 ns"));
        }
        // No maximum: beyond 2^53 is written exact, with the profile's span_beyond_2_53
        // warning (json_numbers.h).
        return Node().Set("type", Str("integer")).Set("minimum", Raw("0"));
      case FD::CPPTYPE_DOUBLE:
      case FD::CPPTYPE_FLOAT:
        return Ref("double");
      case FD::CPPTYPE_BOOL:
        return Node().Set("type", Str("boolean"));
      case FD::CPPTYPE_ENUM: {
        std::vector<Node> names;
        for (int i = 0; i < f->enum_type()->value_count(); ++i) {
          names.push_back(Str(f->enum_type()->value(i)->name()));
        }
        return Node().Set("enum", Array(std::move(names)));
      }
      case FD::CPPTYPE_STRING:
        if (f->type() == FD::TYPE_BYTES) {
          return Node().Set("type", Str("string")).Set("contentEncoding", Str("base64"));
        }
        return Node().Set("type", Str("string"));
      case FD::CPPTYPE_MESSAGE:
        Reach(f->message_type());
        return Ref(f->message_type()->name());
    }
    return Node();
  }

  Node Field(const pb::FieldDescriptor* f) {
    if (f->is_map()) {
      return Node()
          .Set("type", Str("object"))
          .Set("additionalProperties", Element(f->message_type()->map_value()));
    }
    if (f->is_repeated()) return Node().Set("type", Str("array")).Set("items", Element(f));
    return Element(f);
  }

  Node Message(const pb::Descriptor* m) {
    Node props;
    std::vector<Node> required;
    for (int i = 0; i < m->field_count(); ++i) {
      const pb::FieldDescriptor* f = m->field(i);
      props.Set(f->name(), Field(f));
      // Fields without presence are always printed (always_print_primitive_fields).
      if (!f->has_presence()) required.push_back(Str(f->name()));
    }
    Node n;
    n.Set("title", Str(m->full_name())).Set("type", Str("object")).Set("properties",
                                                                         std::move(props));
    if (!required.empty()) n.Set("required", Array(std::move(required)));
    n.Set("additionalProperties", Raw("false"));
    return n;
  }

  void Reach(const pb::Descriptor* m) {
    if (seen_.insert(m->full_name()).second) pending_.push_back(m);
  }

  // Definitions of every message reached from the root, in the order first reached.
  Node Defs() {
    Node defs;
    defs.Set("double", Node()
                           .Set("description", Str("A JSON number; infinite and undefined "
                                                   "values are the strings protobuf writes"))
                           .Set("anyOf", Array({Node().Set("type", Str("number")),
                                                Node().Set("enum", Array({Str("Infinity"),
                                                                          Str("-Infinity"),
                                                                          Str("NaN")}))})));
    std::vector<std::pair<std::string, Node>> messages;
    for (size_t i = 0; i < pending_.size(); ++i) {
      messages.emplace_back(pending_[i]->name(), Message(pending_[i]));
    }
    for (auto& [name, node] : messages) defs.Set(name, std::move(node));
    return defs;
  }

 private:
  std::set<std::string> seen_;
  std::vector<const pb::Descriptor*> pending_;
};

}  // namespace

std::string JsonSchemaFor(const pb::Descriptor* type, const SchemaInfo& info) {
  SchemaBuilder b;
  Node body = b.Message(type);
  Node root;
  root.Set("$schema", Str("https://json-schema.org/draft/2020-12/schema"));
  root.Set("$id", Str(info.id));
  root.Set("title", Str(info.title));
  root.Set("description", Str(info.description));
  for (auto& [k, v] : body.members) {
    if (k != "title") root.Set(k, std::move(v));
  }
  root.Set("$defs", b.Defs());
  std::string out;
  Print(root, 0, &out);
  return out + "\n";
}

std::string ShippedJsonSchema(const std::string& name) {
  const std::string version = absl::StrCat(kProfileSchemaVersion);
  if (name == "profile") {
    return JsonSchemaFor(
        proto::Profile::descriptor(),
        {"urn:qprof:schema:profile", "qprof Profile",
         "What `qprof analyze --json` writes (schema_version " + version +
             "): the analysis of one or more traces. Generated from proto/profile.proto; "
             "field meanings are documented there and in the README."});
  }
  if (name == "diff") {
    return JsonSchemaFor(
        proto::Diff::descriptor(),
        {"urn:qprof:schema:diff", "qprof Diff",
         "What `qprof diff --json` writes (schema_version " + version +
             "): two profiles matched by role. Generated from proto/diff.proto; field "
             "meanings are documented there and in the README."});
  }
  return "";
}

}  // namespace qprof::reports
