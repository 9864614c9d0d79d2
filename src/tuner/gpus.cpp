// `--gpus`: which GPUs the tune's lanes measure on, and the CUDA_VISIBLE_DEVICES of each lane's judge.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "tuner/lanes.hpp"
#include "tuner/tune.hpp"

namespace cudal2::tuner {

namespace {

std::string trim(const std::string& t) {
  const auto b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
  return b == std::string::npos ? "" : t.substr(b, e - b + 1);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const auto c = text.find(',', at);
    out.push_back(trim(text.substr(at, c == std::string::npos ? std::string::npos : c - at)));
    if (c == std::string::npos) return out;
    at = c + 1;
  }
}

}  // namespace

std::vector<int> parse_gpus(const std::string& text, int count) {
  const std::string t = trim(text);
  if (t == "all") {
    if (count <= 0) throw InputError("--gpus all: this process sees no GPU");
    std::vector<int> out(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) out[static_cast<size_t>(i)] = i;
    return out;
  }
  std::vector<int> out;
  for (const auto& item : split_commas(t)) {
    const bool digits = !item.empty() && item.size() <= 4 && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      throw InputError(fmt::format("--gpus '{}': expected 'all' or device numbers such as 0,1 (got '{}')", text, item));
    const int d = std::stoi(item);
    if (d >= count)
      throw InputError(fmt::format("--gpus '{}': GPU {} does not exist (this process sees {} GPU{}: 0..{})", text, d,
                                   count, count == 1 ? "" : "s", count - 1));
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw InputError(fmt::format("--gpus '{}': GPU {} is listed twice", text, d));
    out.push_back(d);
  }
  return out;
}

std::string visible_device_of(int ordinal) {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v || trim(v).empty()) return std::to_string(ordinal);
  const auto entries = split_commas(v);
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= entries.size() || entries[static_cast<size_t>(ordinal)].empty())
    throw InputError(fmt::format("GPU {} is not in CUDA_VISIBLE_DEVICES={}", ordinal, v));
  return entries[static_cast<size_t>(ordinal)];
}

void check_gpus_syntax(const std::string& gpus) {
  if (!gpus.empty() && trim(gpus) != "all") parse_gpus(gpus, 1 << 20);
}

std::vector<int> lane_ordinals(const TuneOptions& o) {
  if (o.gpus.empty()) return {0};  // one lane: the judge on the first GPU this process sees
  const int count = o.gpu_count >= 0 ? o.gpu_count : o.local.count();
  auto ordinals = parse_gpus(o.gpus, count);
  if (o.check_gpu)
    for (int d : ordinals)
      if (o.local.names.at(static_cast<size_t>(d)) != o.local.names.at(static_cast<size_t>(ordinals.front())))
        throw InputError(
            fmt::format("--gpus: GPU {} ({}) and GPU {} ({}) differ; the store keys results by GPU "
                        "model, so tune one model per run",
                        ordinals.front(), o.local.names.at(static_cast<size_t>(ordinals.front())), d,
                        o.local.names.at(static_cast<size_t>(d))));
  return ordinals;
}

}  // namespace cudal2::tuner
