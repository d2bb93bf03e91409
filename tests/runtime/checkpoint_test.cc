#include <cstdio>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "runtime/model_arch.h"
#include "runtime/model_weights.h"
#include "runtime/run.h"
#include "runtime/weights/quantize.h"

namespace qprof::runtime {
namespace {

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("qprof_ckpt_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(CheckpointTest, QuantizedCheckpointRunsLikeTheSyntheticWeights) {
  const std::string dir = TempDir("roundtrip");
  ModelArch c = *PresetArch("tiny");
  const std::string bf = dir + "/model.safetensors";
  ASSERT_TRUE(WriteSyntheticSafetensors(c, 3, 0, bf).ok());
  for (const char* fmt : {"mxfp4", "nvfp4"}) {
    weights::QuantizeOptions q;
    q.format = fmt;
    q.exclude = {"attn", "norm", "embed", "lm_head", "ffn\\.gate"};
    const std::string out = dir + "/" + fmt;
    auto rep = weights::QuantizeSafetensors(bf, out, q);
    ASSERT_TRUE(rep.ok()) << rep.status();
    RunOptions o;
    o.model = "tiny";
    o.format = fmt;
    o.batch = 3;
    o.steps = 2;
    o.context = 20;
    o.seed = 3;
    o.threads = 2;
    auto synthetic = RunDecode(o);
    o.checkpoint_dir = out;
    auto loaded = RunDecode(o);
    ASSERT_TRUE(synthetic.ok()) << synthetic.status();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    // Same quantizers, same values: the same greedy tokens.
    EXPECT_EQ(loaded->tokens, synthetic->tokens) << fmt;
    EXPECT_EQ(loaded->trace.header().run().extra().at("weights"), out);
    // The other format is refused with the detected one named.
    o.format = std::string(fmt) == "mxfp4" ? "nvfp4" : "mxfp4";
    auto wrong = RunDecode(o);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(std::string(wrong.status().message()).find("checkpoint format is"),
              std::string::npos)
        << wrong.status();
    o.format = fmt;
    o.check = true;
    EXPECT_EQ(RunDecode(o).status().code(), absl::StatusCode::kFailedPrecondition);
  }
  std::filesystem::remove_all(dir);
}

TEST(CheckpointTest, MisshapenOrMissingTensorsAreNamed) {
  const std::string dir = TempDir("bad");
  ModelArch small_heads = *PresetArch("tiny");
  small_heads.moe_inter_dim = 32;  // experts of another shape
  const std::string bf = dir + "/model.safetensors";
  ASSERT_TRUE(WriteSyntheticSafetensors(small_heads, 3, 0, bf).ok());
  weights::QuantizeOptions q;
  q.format = "mxfp4";
  q.exclude = {"attn", "norm", "embed", "lm_head", "ffn\\.gate"};
  ASSERT_TRUE(weights::QuantizeSafetensors(bf, dir + "/q", q).ok());
  auto w = LoadCheckpointWeights(dir + "/q", *PresetArch("tiny"), kernels::Fp4Format::kMxfp4, 0);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("layers.0.ffn.experts.0.w13"),
            std::string::npos)
      << w.status();
  // Two layers in the config, one in the file: the missing tensor is named.
  const std::string one = dir + "/one.safetensors";
  ASSERT_TRUE(WriteSyntheticSafetensors(*PresetArch("tiny"), 3, 1, one).ok());
  ASSERT_TRUE(weights::QuantizeSafetensors(one, dir + "/q1", q).ok());
  w = LoadCheckpointWeights(dir + "/q1", *PresetArch("tiny"), kernels::Fp4Format::kMxfp4, 0);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("layers.1."), std::string::npos)
      << w.status();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qprof::runtime
