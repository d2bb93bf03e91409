// Checkpoint::Open on hand-built folders in the published layouts (gpt-oss MXFP4, ModelOpt
// NVFP4), and the errors for missing or misshapen tensors.
#include "runtime/weights/checkpoint.h"

#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "kernels/formats/fp4_codecs.h"
#include "tests/runtime/weights/temp_dir.h"

namespace qprof::weights {
namespace {

using testing::TempDirTest;

class CheckpointTest : public TempDirTest {
 protected:
  void WriteText(const std::string& name, const std::string& text) { WriteBytes(Path(name), text); }
  void Expect(const absl::StatusOr<Checkpoint>& c, absl::StatusCode code,
              const std::string& needle) {
    ASSERT_FALSE(c.ok()) << needle;
    EXPECT_EQ(c.status().code(), code) << c.status();
    EXPECT_NE(std::string(c.status().message()).find(needle), std::string::npos) << c.status();
  }
};

std::vector<uint8_t> Iota(size_t n, uint8_t start = 0) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(start + i * 37);
  return v;
}

std::vector<uint8_t> F32(std::vector<float> v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST_F(CheckpointTest, GptOssMxfp4Layout) {
  // gate_up_proj of 2 experts, N = 4, K = 64 (2 blocks), plus a plain bias.
  SafetensorsWriter w;
  const auto blocks = Iota(2 * 4 * 2 * 16);
  std::vector<uint8_t> scales(2 * 4 * 2);
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = static_cast<uint8_t>(120 + i % 10);
  const std::string base = "model.layers.0.mlp.experts.gate_up_proj";
  ASSERT_TRUE(w.Add(base + "_blocks", Dtype::kU8, {2, 4, 2, 16}, blocks).ok());
  ASSERT_TRUE(w.Add(base + "_scales", Dtype::kU8, {2, 4, 2}, scales).ok());
  ASSERT_TRUE(w.Add(base + "_bias", Dtype::kF32, {2, 4}, F32(std::vector<float>(8, 0.5f))).ok());
  ASSERT_TRUE(w.Write(Path("model-00001-of-00001.safetensors")).ok());
  WriteText("config.json", R"({"model_type": "gpt_oss", "quantization_config":
      {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]}})");
  auto c = Checkpoint::Open(dir_.string());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->format(), CheckpointFormat::kMxfp4);
  EXPECT_EQ(c->excluded_modules(),
            (std::vector<std::string>{"model.layers.*.self_attn", "lm_head"}));
  EXPECT_EQ(c->QuantizedNames(), std::vector<std::string>{base});
  EXPECT_EQ(c->PlainNames(), std::vector<std::string>{base + "_bias"});
  EXPECT_EQ(*c->Shape(base), (std::vector<int64_t>{2, 4, 64}));
  // Decode exactly as gpt-oss does: ldexp(LUT[nibble], scale - 127), low nibble first.
  auto deq = c->Dequantize(base);
  ASSERT_TRUE(deq.ok()) << deq.status();
  ASSERT_EQ(deq->size(), 2u * 4 * 64);
  for (size_t i = 0; i < deq->size(); ++i) {
    const uint8_t byte = blocks[i / 2];
    const uint8_t nib = (i % 2 == 0) ? (byte & 15) : (byte >> 4);
    const float want = std::ldexp(fp4::E2M1ToFloat(nib), scales[i / 32] - 127);
    ASSERT_EQ((*deq)[i], want) << i;
  }
  auto experts = c->LoadMxfp4Experts(base);
  ASSERT_TRUE(experts.ok());
  ASSERT_EQ(experts->size(), 2u);
  EXPECT_EQ((*experts)[1].rows, 4);
  EXPECT_EQ((*experts)[1].cols, 64);
  EXPECT_EQ((*experts)[1].scales[0], scales[8]);
}

TEST_F(CheckpointTest, ModelOptNvfp4WithPerExpertScale2) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.Add("experts.w1.weight", Dtype::kU8, {2, 3, 16}, Iota(96)).ok());
  ASSERT_TRUE(w.Add("experts.w1.weight_scale", Dtype::kF8E4M3, {2, 3, 2},
                    std::vector<uint8_t>(12, 0x38)).ok());
  ASSERT_TRUE(w.Add("experts.w1.weight_scale_2", Dtype::kF32, {2}, F32({0.5f, 0.25f})).ok());
  ASSERT_TRUE(w.Add("experts.w1.input_scale", Dtype::kF32, {}, F32({1.0f})).ok());
  ASSERT_TRUE(w.Write(Path("model.safetensors")).ok());
  WriteText("hf_quant_config.json", R"({"producer": {"name": "modelopt", "version": "0.29"},
      "quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}})");
  auto c = Checkpoint::Open(dir_.string());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->format(), CheckpointFormat::kNvfp4);
  EXPECT_EQ(*c->Shape("experts.w1.weight"), (std::vector<int64_t>{2, 3, 32}));
  // One Nvfp4Matrix cannot hold two tensor scales: the flat load says what to do instead.
  auto flat = c->LoadNvfp4("experts.w1.weight");
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(std::string(flat.status().message()).find("LoadNvfp4Experts"), std::string::npos);
  auto experts = c->LoadNvfp4Experts("experts.w1.weight");
  ASSERT_TRUE(experts.ok()) << experts.status();
  EXPECT_EQ((*experts)[0].scale2, 0.5f);
  EXPECT_EQ((*experts)[1].scale2, 0.25f);
  auto deq = c->Dequantize("experts.w1.weight");
  ASSERT_TRUE(deq.ok());
  const uint8_t b = Iota(96)[48];  // expert 1, first byte
  EXPECT_EQ((*deq)[96], fp4::E2M1ToFloat(b & 15) * 1.0f * 0.25f);
  EXPECT_EQ((*deq)[97], fp4::E2M1ToFloat(b >> 4) * 1.0f * 0.25f);
}

TEST_F(CheckpointTest, MixedPrecisionConfigAndNameDetection) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.Add("a.weight", Dtype::kU8, {1, 8}, Iota(8)).ok());
  ASSERT_TRUE(w.Add("a.weight_scale", Dtype::kF8E4M3, {1, 1}, {0x38}).ok());
  ASSERT_TRUE(w.Add("a.weight_scale_2", Dtype::kF32, {}, F32({1.0f})).ok());
  ASSERT_TRUE(w.Write(Path("model.safetensors")).ok());
  auto c = Checkpoint::Open(Path("model.safetensors"));  // a file works too
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->format(), CheckpointFormat::kNvfp4);
  EXPECT_EQ(c->format_source(), "tensor names");
  WriteText("hf_quant_config.json", R"({"quantization": {"quant_algo": "MIXED_PRECISION",
      "quantized_layers": {"a": {"quant_algo": "NVFP4"}, "b": {"quant_algo": "FP8"}}}})");
  c = Checkpoint::Open(dir_.string());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->format_source(), "hf_quant_config.json");
  WriteText("hf_quant_config.json", R"({"quantization": {"quant_algo": "W4A8_AWQ"}})");
  Expect(Checkpoint::Open(dir_.string()), absl::StatusCode::kInvalidArgument, "W4A8_AWQ");
}

TEST_F(CheckpointTest, MissingPartNamesTheTensor) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.Add("x.weight", Dtype::kU8, {2, 8}, Iota(16)).ok());
  ASSERT_TRUE(w.Add("x.weight_scale", Dtype::kF8E4M3, {2, 1}, {0x38, 0x38}).ok());
  ASSERT_TRUE(w.Write(Path("model.safetensors")).ok());
  Expect(Checkpoint::Open(dir_.string()), absl::StatusCode::kNotFound,
         "NVFP4 tensor 'x.weight_scale_2' is missing");

  SafetensorsWriter m;
  ASSERT_TRUE(m.Add("y_blocks", Dtype::kU8, {2, 1, 16}, Iota(32)).ok());
  ASSERT_TRUE(m.Write(Path("model.safetensors")).ok());
  Expect(Checkpoint::Open(dir_.string()), absl::StatusCode::kNotFound,
         "MXFP4 tensor 'y_scales' is missing");
}

TEST_F(CheckpointTest, MisshapenPartNamesTheTensor) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.Add("x.weight", Dtype::kU8, {2, 8}, Iota(16)).ok());
  ASSERT_TRUE(w.Add("x.weight_scale", Dtype::kF8E4M3, {2, 2}, Iota(4)).ok());  // wants [2, 1]
  ASSERT_TRUE(w.Add("x.weight_scale_2", Dtype::kF32, {}, F32({1.0f})).ok());
  ASSERT_TRUE(w.Write(Path("model.safetensors")).ok());
  Expect(Checkpoint::Open(dir_.string()), absl::StatusCode::kInvalidArgument,
         "tensor 'x.weight_scale': expected F8_E4M3 [2, 1], found F8_E4M3 [2, 2]");

  SafetensorsWriter m;
  ASSERT_TRUE(m.Add("y_blocks", Dtype::kU8, {2, 1, 8}, Iota(16)).ok());  // last dim must be 16
  ASSERT_TRUE(m.Add("y_scales", Dtype::kU8, {2, 1}, Iota(2)).ok());
  ASSERT_TRUE(m.Write(Path("model.safetensors")).ok());
  Expect(Checkpoint::Open(dir_.string()), absl::StatusCode::kInvalidArgument,
         "tensor 'y_blocks': MXFP4 blocks must be U8 [..., N, K/32, 16]");

  SafetensorsWriter s;
  ASSERT_TRUE(s.Add("z.weight", Dtype::kBF16, {2, 8}, Iota(32)).ok());
  ASSERT_TRUE(s.Add("z.weight_scale", Dtype::kF8E4M3, {2, 1}, Iota(2)).ok());
  ASSERT_TRUE(s.Add("z.weight_scale_2", Dtype::kF32, {}, F32({1.0f})).ok());
  ASSERT_TRUE(s.Write(Path("model.safetensors")).ok());
  Expect(Checkpoint::Open(dir_.string()), absl::StatusCode::kInvalidArgument,
         "tensor 'z.weight': NVFP4 packed weight must be U8");
}

TEST_F(CheckpointTest, ShardedIndex) {
  SafetensorsWriter a, b;
  ASSERT_TRUE(a.Add("p.weight", Dtype::kU8, {1, 8}, Iota(8)).ok());
  ASSERT_TRUE(a.Add("p.weight_scale", Dtype::kF8E4M3, {1, 1}, {0x40}).ok());
  ASSERT_TRUE(b.Add("p.weight_scale_2", Dtype::kF32, {}, F32({2.0f})).ok());
  ASSERT_TRUE(a.Write(Path("model-00001-of-00002.safetensors")).ok());
  ASSERT_TRUE(b.Write(Path("model-00002-of-00002.safetensors")).ok());
  WriteText("model.safetensors.index.json", R"({"metadata": {}, "weight_map": {
      "p.weight": "model-00001-of-00002.safetensors",
      "p.weight_scale": "model-00001-of-00002.safetensors",
      "p.weight_scale_2": "model-00002-of-00002.safetensors"}})");
  WriteText("hf_quant_config.json", R"({"quantization": {"quant_algo": "NVFP4"}})");
  auto c = Checkpoint::Open(dir_.string());
  ASSERT_TRUE(c.ok()) << c.status();
  auto m = c->LoadNvfp4("p.weight");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->scale2, 2.0f);
  EXPECT_EQ(m->scales, std::vector<uint8_t>{0x40});
  Expect(Checkpoint::Open(Path("nothing-here")), absl::StatusCode::kNotFound, "nothing-here");
}

}  // namespace
}  // namespace qprof::weights
