#pragma once
// A model's linear layers as GEMM shapes, from its Hugging Face config.json. A transformer's
// projections are nn.Linear layers: y = x W^T with W of N x K, x of M x K, M the tokens of the
// batch. N and K come from the architecture (hidden size, intermediate size, heads, KV heads,
// head dimension, vocabulary); M is whatever the user runs, so it is tuned over buckets
// (1, 2, 4, ... up to a limit, plus values the user names) and the runtime dispatches an M
// between buckets by rule (src/runtime/bucket.hpp). Llama-, Mistral-, Qwen2-style configs (and
// others with the same keys: Gemma, Phi-3, Mixtral's experts) are understood.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/problem.hpp"

namespace cudal2 {

struct ModelConfig {
  std::string name;  // model_type (or the file name)
  std::int64_t hidden = 0, intermediate = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
};

// Throws InputError naming the missing or bad key. origin: for messages (the file name).
ModelConfig parse_model_config(const nlohmann::json& config, const std::string& origin);
ModelConfig read_model_config(const std::string& path);

struct LinearLayer {
  std::string name;  // q_proj, ..., or "q_proj+k_proj" where several layers share (N, K)
  std::int64_t n = 0, k = 0;
};

// Which layers: as Hugging Face transformers has them (q, k, v, o, gate, up, down, lm_head), as
// inference engines fuse them (qkv_proj, gate_up_proj, o, down, lm_head), or both.
enum class LayerSet { Hf, Fused, All };
LayerSet parse_layer_set(const std::string& s);  // "hf", "fused", "all"; InputError otherwise

// Distinct (N, K), in layer order; layers sharing one are named together.
std::vector<LinearLayer> model_linears(const ModelConfig& c, LayerSet set = LayerSet::All);

// 1, 2, 4, ... up to max_m (max_m itself included), plus extra; sorted, distinct. InputError if
// max_m < 1 or an extra value < 1.
std::vector<std::int64_t> m_buckets(std::int64_t max_m, const std::vector<std::int64_t>& extra = {});

// Every (M, N, K): each bucket M with each layer's (N, K).
std::vector<Shape> model_shapes(const std::vector<LinearLayer>& layers, const std::vector<std::int64_t>& ms);

}  // namespace cudal2
