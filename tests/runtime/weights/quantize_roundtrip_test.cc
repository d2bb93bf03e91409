// `qprof quantize` conversion written to disk and read back through Checkpoint: both
// formats, stacked experts, kept tensors, config files, and errors.
#include <cmath>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"
#include "runtime/weights/checkpoint.h"
#include "runtime/weights/quantize.h"
#include "runtime/weights/safetensors.h"
#include "tests/runtime/weights/temp_dir.h"

namespace qprof::weights {
namespace {

using testing::TempDirTest;

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.02f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<uint8_t> F32Bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<uint8_t> Bf16Bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    const uint16_t h = FloatToBf16(v[i]);
    std::memcpy(&b[2 * i], &h, 2);
  }
  return b;
}

std::vector<float> Bf16Round(const std::vector<float>& v) {
  std::vector<float> out;
  for (float x : v) out.push_back(Bf16ToFloat(FloatToBf16(x)));
  return out;
}

class QuantizeRoundTripTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    w1_ = Random(64 * 96, 1);
    experts_ = Bf16Round(Random(3 * 32 * 64, 2));
    embed_ = Random(10 * 32, 3);
    SafetensorsWriter w;
    ASSERT_TRUE(w.Add("layers.0.w1.weight", Dtype::kF32, {64, 96}, F32Bytes(w1_)).ok());
    ASSERT_TRUE(w.Add("layers.0.experts.w2.weight", Dtype::kBF16, {3, 32, 64},
                      Bf16Bytes(experts_)).ok());
    ASSERT_TRUE(w.Add("norm.weight", Dtype::kF32, {64}, F32Bytes(Random(64, 4))).ok());
    ASSERT_TRUE(w.Add("odd.weight", Dtype::kF32, {8, 40}, F32Bytes(Random(320, 5))).ok());
    ASSERT_TRUE(w.Add("lm_head.weight", Dtype::kF32, {16, 64}, F32Bytes(Random(1024, 6))).ok());
    ASSERT_TRUE(w.Add("embed", Dtype::kF32, {10, 32}, F32Bytes(embed_)).ok());
    ASSERT_TRUE(w.Add("step", Dtype::kI64, {1}, std::vector<uint8_t>(8, 1)).ok());
    w.SetMetadata("format", "pt");
    ASSERT_TRUE(w.Write(Path("in.safetensors")).ok());
  }

  QuantizeReport Run(const std::string& format, const std::string& out) {
    QuantizeOptions opt;
    opt.format = format;
    opt.exclude = {"^lm_head"};
    auto r = QuantizeSafetensors(Path("in.safetensors"), Path(out), opt);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : QuantizeReport();
  }

  std::vector<float> w1_, experts_, embed_;
};

TEST_F(QuantizeRoundTripTest, Nvfp4ThroughTheCheckpointLoader) {
  const QuantizeReport r = Run("nvfp4", "nv");
  ASSERT_EQ(r.tensors.size(), 7u);
  auto c = Checkpoint::Open(Path("nv"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->format(), CheckpointFormat::kNvfp4);
  EXPECT_EQ(c->format_source(), "hf_quant_config.json");
  EXPECT_EQ(c->QuantizedNames(),
            (std::vector<std::string>{"layers.0.experts.w2.weight", "layers.0.w1.weight"}));
  // Not converted, and listed: excluded, 1-D, K % 16 != 0, name without .weight, not float.
  EXPECT_EQ(c->excluded_modules(),
            (std::vector<std::string>{"embed", "lm_head", "norm", "odd", "step"}));
  EXPECT_EQ(*c->Shape("layers.0.w1.weight"), (std::vector<int64_t>{64, 96}));
  EXPECT_EQ(*c->Shape("layers.0.experts.w2.weight"), (std::vector<int64_t>{3, 32, 64}));

  // The stored bits are what the formats library produces for the same input.
  auto direct = fp4::QuantizeNvfp4(w1_.data(), 64, 96, "w1");
  auto loaded = c->LoadNvfp4("layers.0.w1.weight");
  ASSERT_TRUE(direct.ok() && loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->packed, direct->packed);
  EXPECT_EQ(loaded->scales, direct->scales);
  EXPECT_EQ(loaded->scale2, direct->scale2);
  auto deq = c->Dequantize("layers.0.w1.weight");
  ASSERT_TRUE(deq.ok());
  std::vector<float> want(w1_.size());
  fp4::DequantizeNvfp4(*direct, want.data());
  EXPECT_EQ(*deq, want);

  // Stacked experts: one tensor scale for the whole [3, 32, 64] tensor, split per expert.
  auto experts = c->LoadNvfp4Experts("layers.0.experts.w2.weight");
  ASSERT_TRUE(experts.ok()) << experts.status();
  ASSERT_EQ(experts->size(), 3u);
  auto whole = fp4::QuantizeNvfp4(experts_.data(), 96, 64, "w2");
  ASSERT_TRUE(whole.ok());
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ((*experts)[e].rows, 32);
    EXPECT_EQ((*experts)[e].scale2, whole->scale2);
    EXPECT_TRUE(std::equal((*experts)[e].packed.begin(), (*experts)[e].packed.end(),
                           whole->packed.begin() + e * 32 * 32));
  }
  // Kept tensors are byte-identical and still readable.
  auto norm = c->Dequantize("norm.weight");
  ASSERT_TRUE(norm.ok());
  EXPECT_EQ(*norm, Random(64, 4));
  auto raw = c->Raw("layers.0.w1.weight_scale");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->info->dtype, Dtype::kF8E4M3);
  EXPECT_EQ(raw->info->shape, (std::vector<int64_t>{64, 6}));
  EXPECT_EQ(c->Raw("layers.0.w1.weight_scale_2")->info->shape, std::vector<int64_t>{});

  // Errors are reported and sensible for Gaussian data at 4.5 bits.
  EXPECT_GT(r.rel_rms_error, 0.02);
  EXPECT_LT(r.rel_rms_error, 0.2);
  for (const auto& t : r.tensors) {
    if (t.name == "odd.weight") {
      EXPECT_EQ(t.reason, "K = 40 not a multiple of 16");
    }
    if (t.name == "lm_head.weight") {
      EXPECT_EQ(t.reason, "--exclude '^lm_head'");
    }
  }
}

TEST_F(QuantizeRoundTripTest, Mxfp4ThroughTheCheckpointLoader) {
  const QuantizeReport r = Run("mxfp4", "mx");
  auto c = Checkpoint::Open(Path("mx"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->format(), CheckpointFormat::kMxfp4);
  EXPECT_EQ(c->format_source(), "config.json");
  EXPECT_EQ(c->QuantizedNames(),
            (std::vector<std::string>{"embed", "layers.0.experts.w2", "layers.0.w1"}));
  EXPECT_EQ(c->excluded_modules(), (std::vector<std::string>{"lm_head", "norm", "odd", "step"}));
  auto blocks = c->Raw("layers.0.experts.w2_blocks");
  ASSERT_TRUE(blocks.ok());
  EXPECT_EQ(blocks->info->shape, (std::vector<int64_t>{3, 32, 2, 16}));
  EXPECT_EQ(c->Raw("layers.0.experts.w2_scales")->info->shape,
            (std::vector<int64_t>{3, 32, 2}));

  auto direct = fp4::QuantizeMxfp4(embed_.data(), 10, 32, "embed");
  ASSERT_TRUE(direct.ok());
  std::vector<float> want(embed_.size());
  fp4::DequantizeMxfp4(*direct, want.data());
  EXPECT_EQ(*c->Dequantize("embed"), want);

  auto experts = c->LoadMxfp4Experts("layers.0.experts.w2");
  ASSERT_TRUE(experts.ok());
  ASSERT_EQ(experts->size(), 3u);
  auto e1 = fp4::QuantizeMxfp4(experts_.data() + 32 * 64, 32, 64, "e1");
  ASSERT_TRUE(e1.ok());
  EXPECT_EQ((*experts)[1].packed, e1->packed);
  EXPECT_EQ((*experts)[1].scales, e1->scales);
  // Flattened view: rows = E * N.
  auto flat = c->LoadMxfp4("layers.0.experts.w2");
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->rows, 96);
  EXPECT_EQ(c->LoadNvfp4("layers.0.w1").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_GT(r.rel_rms_error, 0.02);
  EXPECT_LT(r.rel_rms_error, 0.3);
}

TEST_F(QuantizeRoundTripTest, NonFiniteInputNamesTensorAndElement) {
  auto bad = w1_;
  bad[100] = NAN;
  SafetensorsWriter w;
  ASSERT_TRUE(w.Add("a.weight", Dtype::kF32, {64, 96}, F32Bytes(bad)).ok());
  ASSERT_TRUE(w.Write(Path("bad.safetensors")).ok());
  for (const char* format : {"nvfp4", "mxfp4"}) {
    QuantizeOptions opt;
    opt.format = format;
    auto r = QuantizeSafetensors(Path("bad.safetensors"), Path("o"), opt);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(r.status().message()).find("'a.weight': element 100 (row 1, col 4)"),
              std::string::npos)
        << r.status();
  }
}

TEST_F(QuantizeRoundTripTest, BadOptions) {
  QuantizeOptions opt;
  opt.format = "int4";
  EXPECT_EQ(QuantizeSafetensors(Path("in.safetensors"), Path("o"), opt).status().code(),
            absl::StatusCode::kInvalidArgument);
  opt.format = "nvfp4";
  opt.exclude = {"("};
  EXPECT_EQ(QuantizeSafetensors(Path("in.safetensors"), Path("o"), opt).status().code(),
            absl::StatusCode::kInvalidArgument);
  opt.exclude = {};
  EXPECT_EQ(QuantizeSafetensors(Path("missing.safetensors"), Path("o"), opt).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace qprof::weights
