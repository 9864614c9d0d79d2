#include "core/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

namespace cudal2 {

namespace {

std::int64_t positive(const nlohmann::json& c, const char* key, const std::string& origin) {
  if (!c.contains(key) || c[key].is_null()) throw InputError(fmt::format("{}: no \"{}\"", origin, key));
  if (!c[key].is_number_integer() || c[key].get<std::int64_t>() < 1)
    throw InputError(fmt::format("{}: \"{}\" must be a positive integer, got {}", origin, key, c[key].dump()));
  return c[key].get<std::int64_t>();
}

}  // namespace

ModelConfig parse_model_config(const nlohmann::json& config, const std::string& origin) {
  if (!config.is_object()) throw InputError(fmt::format("{}: not a JSON object", origin));
  // Multimodal configs keep the language model's numbers under "text_config".
  const nlohmann::json& c =
      !config.contains("hidden_size") && config.contains("text_config") && config["text_config"].is_object()
          ? config["text_config"]
          : config;
  ModelConfig m;
  m.name = c.value("model_type", config.value("model_type", origin));
  m.hidden = positive(c, "hidden_size", origin);
  m.intermediate = positive(c, "intermediate_size", origin);
  m.heads = positive(c, "num_attention_heads", origin);
  // No "num_key_value_heads": multi-head attention, as many KV heads as heads.
  m.kv_heads = c.contains("num_key_value_heads") && !c["num_key_value_heads"].is_null()
                   ? positive(c, "num_key_value_heads", origin)
                   : m.heads;
  // "head_dim" when the model sets it apart from hidden / heads (Mistral-Nemo, Gemma, Qwen3).
  if (c.contains("head_dim") && !c["head_dim"].is_null()) {
    m.head_dim = positive(c, "head_dim", origin);
  } else {
    if (m.hidden % m.heads != 0)
      throw InputError(fmt::format("{}: hidden_size {} is not a multiple of num_attention_heads {} (and no head_dim)",
                                   origin, m.hidden, m.heads));
    m.head_dim = m.hidden / m.heads;
  }
  if (m.heads % m.kv_heads != 0)
    throw InputError(fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", origin,
                                 m.heads, m.kv_heads));
  m.vocab = positive(c, "vocab_size", origin);
  return m;
}

ModelConfig read_model_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read model config '{}'", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  return parse_model_config(j, path);
}

LayerSet parse_layer_set(const std::string& s) {
  if (s == "hf") return LayerSet::Hf;
  if (s == "fused") return LayerSet::Fused;
  if (s == "all") return LayerSet::All;
  throw InputError(fmt::format("unknown layer set '{}' (hf, fused, all)", s));
}

std::vector<LinearLayer> model_linears(const ModelConfig& c, LayerSet set) {
  const std::int64_t q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  std::vector<LinearLayer> layers;
  const bool hf = set != LayerSet::Fused, fused = set != LayerSet::Hf;
  if (hf) layers.insert(layers.end(), {{"q_proj", q, c.hidden}, {"k_proj", kv, c.hidden}, {"v_proj", kv, c.hidden}});
  if (fused) layers.push_back({"qkv_proj", q + 2 * kv, c.hidden});
  layers.push_back({"o_proj", c.hidden, q});
  if (hf) layers.insert(layers.end(), {{"gate_proj", c.intermediate, c.hidden}, {"up_proj", c.intermediate, c.hidden}});
  if (fused) layers.push_back({"gate_up_proj", 2 * c.intermediate, c.hidden});
  layers.insert(layers.end(), {{"down_proj", c.hidden, c.intermediate}, {"lm_head", c.vocab, c.hidden}});
  std::vector<LinearLayer> out;
  for (const auto& l : layers) {
    auto it = std::find_if(out.begin(), out.end(), [&](const LinearLayer& o) { return o.n == l.n && o.k == l.k; });
    if (it == out.end())
      out.push_back(l);
    else
      it->name += "+" + l.name;
  }
  return out;
}

std::vector<std::int64_t> m_buckets(std::int64_t max_m, const std::vector<std::int64_t>& extra) {
  if (max_m < 1) throw InputError(fmt::format("the largest M bucket must be at least 1, got {}", max_m));
  std::vector<std::int64_t> ms;
  for (std::int64_t m = 1; m < max_m; m *= 2) ms.push_back(m);
  ms.push_back(max_m);
  for (auto m : extra) {
    if (m < 1) throw InputError(fmt::format("M values must be at least 1, got {}", m));
    ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
  return ms;
}

std::vector<Shape> model_shapes(const std::vector<LinearLayer>& layers, const std::vector<std::int64_t>& ms) {
  std::vector<Shape> out;
  for (const auto& l : layers)
    for (auto m : ms) out.push_back({m, l.n, l.k});
  return out;
}

}  // namespace cudal2
