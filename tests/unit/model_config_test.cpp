// A model's linear layers from its Hugging Face config.json (src/core/model.hpp): the committed
// example configs, the keys' defaults (no KV heads, no head_dim, text_config), errors that name
// the key, M buckets, and `--model` on the command line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "run_command.hpp"

#ifndef CUDAL2_CLI
#error "CUDAL2_CLI (path to the cudal2 binary) must be defined by the build"
#endif
#ifndef CUDAL2_SOURCE_DIR
#error "CUDAL2_SOURCE_DIR must be defined by the build"
#endif

namespace cudal2 {
namespace {

std::string example(const std::string& name) { return std::string(CUDAL2_SOURCE_DIR) + "/examples/models/" + name; }

std::vector<std::string> describe(const std::vector<LinearLayer>& ls) {
  std::vector<std::string> out;
  for (const auto& l : ls) out.push_back(l.name + " " + std::to_string(l.n) + "x" + std::to_string(l.k));
  return out;
}

TEST(ModelConfig, Llama3_8B) {
  const auto c = read_model_config(example("llama-3-8b.json"));
  EXPECT_EQ(c.name, "llama");
  EXPECT_EQ(c.hidden, 4096);
  EXPECT_EQ(c.intermediate, 14336);
  EXPECT_EQ(c.heads, 32);
  EXPECT_EQ(c.kv_heads, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.vocab, 128256);
  // As transformers has the modules: q and o share 4096x4096, k and v 1024x4096, gate and up.
  EXPECT_EQ(describe(model_linears(c, LayerSet::Hf)),
            (std::vector<std::string>{"q_proj+o_proj 4096x4096", "k_proj+v_proj 1024x4096",
                                      "gate_proj+up_proj 14336x4096", "down_proj 4096x14336", "lm_head 128256x4096"}));
  // As inference engines fuse them.
  EXPECT_EQ(describe(model_linears(c, LayerSet::Fused)),
            (std::vector<std::string>{"qkv_proj 6144x4096", "o_proj 4096x4096", "gate_up_proj 28672x4096",
                                      "down_proj 4096x14336", "lm_head 128256x4096"}));
  EXPECT_EQ(model_linears(c, LayerSet::All).size(), 7u);
}

TEST(ModelConfig, QwenAndMistral) {
  const auto q = read_model_config(example("qwen2-7b.json"));
  EXPECT_EQ(describe(model_linears(q, LayerSet::Hf)),
            (std::vector<std::string>{"q_proj+o_proj 3584x3584", "k_proj+v_proj 512x3584",
                                      "gate_proj+up_proj 18944x3584", "down_proj 3584x18944", "lm_head 152064x3584"}));
  const auto m = read_model_config(example("mistral-7b.json"));
  EXPECT_EQ(m.name, "mistral");
  EXPECT_EQ(model_linears(m, LayerSet::Hf).back().n, 32000);
  // head_dim set apart: q is 32 x 128 = 4096 wide while hidden is 5120, so o_proj is 5120x4096.
  const auto nemo = read_model_config(example("mistral-nemo-12b.json"));
  EXPECT_EQ(nemo.head_dim, 128);
  EXPECT_EQ(describe(model_linears(nemo, LayerSet::Hf)),
            (std::vector<std::string>{"q_proj 4096x5120", "k_proj+v_proj 1024x5120", "o_proj 5120x4096",
                                      "gate_proj+up_proj 14336x5120", "down_proj 5120x14336", "lm_head 131072x5120"}));
}

nlohmann::json minimal() {
  return {{"hidden_size", 2048}, {"intermediate_size", 5504}, {"num_attention_heads", 16}, {"vocab_size", 32000}};
}

TEST(ModelConfig, DefaultsAndNesting) {
  // No num_key_value_heads: multi-head attention; no head_dim: hidden / heads.
  auto c = parse_model_config(minimal(), "x.json");
  EXPECT_EQ(c.kv_heads, 16);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.name, "x.json");
  auto j = minimal();
  j["num_key_value_heads"] = nullptr;  // written as null by some exporters
  EXPECT_EQ(parse_model_config(j, "x").kv_heads, 16);
  // A multimodal config: the language model's numbers under text_config.
  const nlohmann::json mm = {{"model_type", "llava"}, {"text_config", minimal()}};
  c = parse_model_config(mm, "mm.json");
  EXPECT_EQ(c.hidden, 2048);
  EXPECT_EQ(c.name, "llava");
}

void expect_input_error(const nlohmann::json& j, const std::string& needle) {
  try {
    parse_model_config(j, "cfg.json");
    ADD_FAILURE() << "no InputError for " << j.dump();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cfg.json"), std::string::npos) << e.what();
  }
}

TEST(ModelConfig, ErrorsNameTheKey) {
  auto j = minimal();
  j.erase("hidden_size");
  expect_input_error(j, "\"hidden_size\"");
  j = minimal();
  j["intermediate_size"] = -3;
  expect_input_error(j, "\"intermediate_size\" must be a positive integer");
  j = minimal();
  j["num_attention_heads"] = "16";
  expect_input_error(j, "\"num_attention_heads\"");
  j = minimal();
  j["num_attention_heads"] = 15;  // 2048 % 15 != 0, no head_dim
  expect_input_error(j, "not a multiple of num_attention_heads");
  j = minimal();
  j["num_key_value_heads"] = 5;
  expect_input_error(j, "not a multiple of num_key_value_heads");
  expect_input_error(nlohmann::json::array(), "not a JSON object");
  EXPECT_THROW(read_model_config("/nonexistent/config.json"), InputError);
  EXPECT_THROW(parse_layer_set("both"), InputError);
}

TEST(ModelConfig, MBuckets) {
  EXPECT_EQ(m_buckets(16), (std::vector<std::int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(m_buckets(3000), (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3000}));
  EXPECT_EQ(m_buckets(8, {3, 8, 100}), (std::vector<std::int64_t>{1, 2, 3, 4, 8, 100}));
  EXPECT_EQ(m_buckets(1), (std::vector<std::int64_t>{1}));
  EXPECT_THROW(m_buckets(0), InputError);
  EXPECT_THROW(m_buckets(8, {0}), InputError);
  const auto shapes = model_shapes({{"a", 10, 20}, {"b", 30, 40}}, {1, 2});
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[1], (Shape{2, 10, 20}));
  EXPECT_EQ(shapes[2], (Shape{1, 30, 40}));
}

TEST(ModelConfig, CliTakesModelShapes) {
  // Input errors are exit 2 before any GPU is needed.
  auto o = test_util::run_command(std::string("'") + CUDAL2_CLI + "' bench --model /nonexistent.json 2>&1");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("cannot read model config"), std::string::npos) << o.output;
  o = test_util::run_command(std::string("'") + CUDAL2_CLI + "' tune --model '" + example("qwen2-7b.json") +
                             "' --model-m 3x 2>&1");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("--model-m: '3x' is not a number"), std::string::npos) << o.output;
  o = test_util::run_command(std::string("'") + CUDAL2_CLI + "' bench --model-m 3 2>&1");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("--model-m needs --model"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace cudal2
