#include "runtime/weights/safetensors.h"

#include <cmath>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "tests/runtime/weights/temp_dir.h"

namespace qprof::weights {
namespace {

using testing::TempDirTest;

// A safetensors image from a literal JSON header and a data section.
std::string Image(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + header + data;
}

class SafetensorsTest : public TempDirTest {
 protected:
  // Parses an image through the file path (mmap) and returns the status.
  absl::Status OpenImage(const std::string& image) {
    WriteBytes(Path("t.safetensors"), image);
    return SafetensorsFile::Open(Path("t.safetensors")).status();
  }
  void ExpectError(const std::string& image, absl::StatusCode code, const std::string& needle) {
    const absl::Status s = OpenImage(image);
    ASSERT_FALSE(s.ok()) << "accepted: " << needle;
    EXPECT_EQ(s.code(), code) << s;
    const std::string msg(s.message());
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_NE(msg.find("t.safetensors"), std::string::npos) << msg;
  }
};

template <typename T>
std::vector<uint8_t> AsBytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST_F(SafetensorsTest, WriteReadRoundTripAllDtypes) {
  SafetensorsWriter w;
  std::mt19937 rng(5);
  struct Spec { std::string name; Dtype dtype; std::vector<int64_t> shape; };
  const std::vector<Spec> specs = {
      {"u8", Dtype::kU8, {3, 5}},         {"i8", Dtype::kI8, {7}},
      {"e4m3", Dtype::kF8E4M3, {2, 3}},   {"f32", Dtype::kF32, {3, 3}},
      {"bf16", Dtype::kBF16, {5}},        {"f16", Dtype::kF16, {1, 1, 3}},
      {"i32", Dtype::kI32, {2}},          {"i64", Dtype::kI64, {3}},
      {"scalar", Dtype::kF32, {}},        {"empty", Dtype::kF32, {0, 4}},
      {"quote\"name", Dtype::kU8, {1}}};
  std::vector<std::vector<uint8_t>> datas;
  for (const Spec& s : specs) {
    int64_t n = 1;
    for (int64_t d : s.shape) n *= d;
    std::vector<uint8_t> bytes(n * DtypeSize(s.dtype));
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    datas.push_back(bytes);
    ASSERT_TRUE(w.Add(s.name, s.dtype, s.shape, bytes).ok()) << s.name;
  }
  w.SetMetadata("format", "pt");
  ASSERT_TRUE(w.Write(Path("a.safetensors")).ok());
  auto f = SafetensorsFile::Open(Path("a.safetensors"));
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->tensors().size(), specs.size());
  EXPECT_EQ(f->metadata().at("format"), "pt");
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorInfo* t = f->Find(specs[i].name);
    ASSERT_NE(t, nullptr) << specs[i].name;
    EXPECT_EQ(t->dtype, specs[i].dtype);
    EXPECT_EQ(t->shape, specs[i].shape);
    ASSERT_EQ(t->end - t->begin, datas[i].size());
    EXPECT_EQ(0, std::memcmp(f->Data(*t), datas[i].data(), datas[i].size())) << specs[i].name;
  }
  // Data starts 8-byte aligned.
  const std::string bytes = ReadBytes(Path("a.safetensors"));
  uint64_t hlen;
  std::memcpy(&hlen, bytes.data(), 8);
  EXPECT_EQ((8 + hlen) % 8, 0u);
  EXPECT_EQ(f->Get("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SafetensorsTest, ReadAsF32WidensBf16AndF16) {
  SafetensorsWriter w;
  const std::vector<float> vals = {1.0f, -2.5f, 65504.0f, 0x1p-24f, 0.0f, -0.0f, 3.140625f};
  std::vector<uint16_t> bf, hf;
  for (float v : vals) {
    bf.push_back(FloatToBf16(v));
    hf.push_back(FloatToF16(v));
  }
  ASSERT_TRUE(w.Add("b", Dtype::kBF16, {7}, AsBytes(bf)).ok());
  ASSERT_TRUE(w.Add("h", Dtype::kF16, {7}, AsBytes(hf)).ok());
  ASSERT_TRUE(w.Add("f", Dtype::kF32, {7}, AsBytes(vals)).ok());
  ASSERT_TRUE(w.Add("u", Dtype::kU8, {1}, {1}).ok());
  ASSERT_TRUE(w.Write(Path("c.safetensors")).ok());
  auto f = SafetensorsFile::Open(Path("c.safetensors"));
  ASSERT_TRUE(f.ok());
  auto h = f->ReadAsF32(**f->Get("h"));
  auto fl = f->ReadAsF32(**f->Get("f"));
  auto b = f->ReadAsF32(**f->Get("b"));
  ASSERT_TRUE(h.ok() && fl.ok() && b.ok());
  EXPECT_EQ(*h, vals);  // all exactly representable in F16
  EXPECT_EQ(*fl, vals);
  EXPECT_EQ((*b)[0], 1.0f);
  EXPECT_EQ((*b)[1], -2.5f);
  EXPECT_EQ((*b)[2], 65536.0f);  // 65504 rounds to 8 bits of mantissa
  EXPECT_EQ(f->ReadAsF32(**f->Get("u")).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HalfConversions, EveryF16AndBf16CodeRoundTrips) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const float h = F16ToFloat(static_cast<uint16_t>(c));
    if (std::isnan(h)) {
      EXPECT_TRUE(std::isnan(F16ToFloat(FloatToF16(h))));
    } else {
      ASSERT_EQ(FloatToF16(h), c) << c;
    }
    const float b = Bf16ToFloat(static_cast<uint16_t>(c));
    if (!std::isnan(b)) {
      ASSERT_EQ(FloatToBf16(b), c) << c;
    }
  }
  EXPECT_EQ(F16ToFloat(0x3C00), 1.0f);
  EXPECT_EQ(F16ToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(F16ToFloat(0xFC00), -INFINITY);
  EXPECT_EQ(FloatToF16(65520.0f), 0x7C00);  // tie above the max rounds to Inf
  EXPECT_EQ(FloatToF16(0x1p-25f), 0x0000);  // tie 0 / 2^-24 -> even
  EXPECT_EQ(FloatToF16(0x1.8p-24f), 0x0002);
}

TEST_F(SafetensorsTest, FileShorterThanLengthField) {
  ExpectError("abc", absl::StatusCode::kDataLoss, "less than the 8-byte header length");
}

TEST_F(SafetensorsTest, HeaderLongerThanFile) {
  std::string img = Image("{}", "");
  img[0] = 100;  // claims 100 header bytes, has 2
  ExpectError(img, absl::StatusCode::kInvalidArgument, "header length 100 exceeds the file");
  img = Image("{}", "");
  for (int i = 0; i < 8; ++i) img[i] = '\xff';
  ExpectError(img, absl::StatusCode::kInvalidArgument, "exceeds the file");
}

TEST_F(SafetensorsTest, HeaderNotJson) {
  ExpectError(Image("not json at all", ""), absl::StatusCode::kInvalidArgument, "not a JSON object");
  ExpectError(Image("[1,2]", ""), absl::StatusCode::kInvalidArgument, "not a JSON object");
  ExpectError(Image(R"({"a": 5})", ""), absl::StatusCode::kInvalidArgument,
              "tensor 'a' entry is not a JSON object");
}

TEST_F(SafetensorsTest, OverlappingOffsets) {
  ExpectError(Image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                    std::string(12, '\0')),
              absl::StatusCode::kInvalidArgument, "tensors 'a' and 'b' overlap");
}

TEST_F(SafetensorsTest, OffsetsOutOfRange) {
  ExpectError(Image(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                    std::string(8, '\0')),
              absl::StatusCode::kDataLoss, "tensor 'a' ends at data byte 16");
  ExpectError(Image(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", ""),
              absl::StatusCode::kInvalidArgument, "run backwards");
  ExpectError(Image(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,0]}})",
                    ""),
              absl::StatusCode::kInvalidArgument, "tensor 'a'");
  ExpectError(Image(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", "x"),
              absl::StatusCode::kInvalidArgument, "must hold 2 numbers");
}

TEST_F(SafetensorsTest, DtypeOrShapeNotMatchingByteCount) {
  ExpectError(Image(R"({"a":{"dtype":"BF16","shape":[3],"data_offsets":[0,8]}})",
                    std::string(8, '\0')),
              absl::StatusCode::kInvalidArgument, "BF16 [3] needs 6 bytes but data_offsets span 8");
  ExpectError(Image(R"({"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})",
                    std::string(8, '\0')),
              absl::StatusCode::kInvalidArgument, "unknown dtype 'F33'");
  ExpectError(Image(R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", "x"),
              absl::StatusCode::kInvalidArgument, "non-negative integer");
  ExpectError(Image(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,1]}})",
                    "x"),
              absl::StatusCode::kInvalidArgument, "overflows");
  ExpectError(Image(R"({"a":{"dtype":"U8","shape":[1]}})", "x"),
              absl::StatusCode::kInvalidArgument, "tensor 'a' lacks data_offsets");
}

TEST_F(SafetensorsTest, DuplicateNames) {
  ExpectError(Image(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                    R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                    "xy"),
              absl::StatusCode::kInvalidArgument, "tensor 'a' appears twice");
}

TEST_F(SafetensorsTest, TruncatedAtEveryByteNeverCrashes) {
  SafetensorsWriter w;
  std::vector<float> v(50, 1.5f);
  ASSERT_TRUE(w.Add("x", Dtype::kF32, {5, 10}, AsBytes(v)).ok());
  ASSERT_TRUE(w.Add("y", Dtype::kU8, {3}, {1, 2, 3}).ok());
  ASSERT_TRUE(w.Write(Path("full.safetensors")).ok());
  const std::string full = ReadBytes(Path("full.safetensors"));
  for (size_t cut = 0; cut < full.size(); ++cut) {
    const absl::Status s = OpenImage(full.substr(0, cut));
    ASSERT_FALSE(s.ok()) << "cut at " << cut;
    ASSERT_TRUE(s.code() == absl::StatusCode::kDataLoss ||
                s.code() == absl::StatusCode::kInvalidArgument)
        << s;
  }
  EXPECT_TRUE(OpenImage(full).ok());
}

TEST_F(SafetensorsTest, RandomCorruptionNeverCrashes) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.Add("weight", Dtype::kBF16, {4, 4}, std::vector<uint8_t>(32, 7)).ok());
  ASSERT_TRUE(w.Add("bias", Dtype::kF32, {4}, std::vector<uint8_t>(16, 0)).ok());
  ASSERT_TRUE(w.Write(Path("ok.safetensors")).ok());
  const std::string good = ReadBytes(Path("ok.safetensors"));
  std::mt19937 rng(1234);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bad = good;
    const int flips = 1 + rng() % 3;
    for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    auto h = ParseSafetensors(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), "mem");
    if (!h.ok()) {
      ++rejected;
      continue;
    }
    // Whatever was accepted must lie inside the image.
    for (const TensorInfo& t : h->tensors) {
      ASSERT_LE(h->data_offset + t.end, bad.size());
    }
  }
  EXPECT_GT(rejected, 100);
}

TEST(SafetensorsWriterTest, RejectsDuplicatesAndWrongSizes) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.Add("a", Dtype::kF32, {2}, std::vector<uint8_t>(8)).ok());
  EXPECT_FALSE(w.Add("a", Dtype::kF32, {2}, std::vector<uint8_t>(8)).ok());
  EXPECT_FALSE(w.Add("b", Dtype::kF32, {3}, std::vector<uint8_t>(8)).ok());
  EXPECT_FALSE(w.Add("__metadata__", Dtype::kU8, {1}, std::vector<uint8_t>(1)).ok());
}

}  // namespace
}  // namespace qprof::weights
