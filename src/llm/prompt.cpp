#include "llm/prompt.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/codegen.hpp"
#include "codegen/spec.hpp"
#include "core/paths.hpp"
#include "store/store.hpp"

namespace cudal2::llm {

std::string render_template(const std::string& tmpl, const std::map<std::string, std::string>& vars) {
  auto get = [&](const std::string& k) -> std::string {
    auto it = vars.find(k);
    return it == vars.end() ? std::string() : it->second;
  };
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    const size_t open = tmpl.find("{{", i);
    if (open == std::string::npos) {
      out.append(tmpl, i, std::string::npos);
      break;
    }
    out.append(tmpl, i, open - i);
    const size_t close = tmpl.find("}}", open + 2);
    if (close == std::string::npos) {
      out.append(tmpl, open, std::string::npos);
      break;
    }
    std::string name = tmpl.substr(open + 2, close - open - 2);
    i = close + 2;
    if (!name.empty() && name[0] == '#') {
      name.erase(0, 1);
      const std::string end_tag = "{{/" + name + "}}";
      const size_t end = tmpl.find(end_tag, i);
      const std::string inner = tmpl.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end == std::string::npos ? tmpl.size() : end + end_tag.size();
      if (!get(name).empty()) out += render_template(inner, vars);
    } else if (!name.empty() && name[0] == '/') {
      // a stray end tag: dropped
    } else {
      out += get(name);
    }
  }
  return out;
}

std::string read_text_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(fmt::format("cannot read '{}'", path));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string default_template_path() {
  if (const char* e = std::getenv("CUDAL2_PROMPT")) return e;
  // share/cudal2/prompts beside the binary (core/paths.hpp), else the working directory's prompts/.
  const auto data = paths::data_dir();
  return data.empty() ? std::string("prompts/kernel.md") : (data / "prompts" / "kernel.md").string();
}

std::string kernel_abi_text() {
  const std::string dir = paths::kernels_dir();
  return read_text_file((dir.empty() ? std::string("src/kernels") : dir) + "/cudal2_kernel_abi.h");
}

double shape_distance(const Shape& a, const Shape& b) {
  auto d = [](int64_t x, int64_t y) { return std::abs(std::log2(double(x)) - std::log2(double(y))); };
  return d(a.m, b.m) + d(a.n, b.n) + d(a.k, b.k);
}

namespace {

std::string cut(const std::string& s, size_t max_chars) {
  if (max_chars == 0 || s.size() <= max_chars) return s;
  return s.substr(0, max_chars) + fmt::format("\n/* ... cut: {} more characters */\n", s.size() - max_chars);
}

}  // namespace

std::optional<Reference> retrieve_reference(const std::string& db_path, const Problem& p, const std::string& gpu,
                                            size_t max_chars) {
  std::error_code ec;
  if (db_path.empty() || !std::filesystem::exists(db_path, ec)) return std::nullopt;
  // Read only: the tuner that asks owns the store and writes it meanwhile.
  const auto db = store::Store::open_to_read(db_path, store::Verify::Quick);
  std::optional<Reference> best;
  double best_d = 0;
  std::string family;
  for (const auto& row : db.best_with_specs(to_string(p.accum), to_string(p.layout), gpu)) {
    Reference r;
    r.gpu = row.best.gpu, r.shape = {row.best.m, row.best.n, row.best.k}, r.median_us = row.best.median_us;
    r.spec_hash = row.best.spec_hash;
    const std::string& fam = row.family;
    const std::string& text = row.text;
    const double d = shape_distance(r.shape, p.shape);
    // Nearest shape; on the same shape (several GPUs) the fastest.
    if (best && (d > best_d || (d == best_d && r.median_us >= best->median_us))) continue;
    r.same_shape = d == 0;
    if (fam == "source") {
      r.source = text, r.spec_text = "free-form source " + r.spec_hash;
    } else {
      r.spec_text = text;
    }
    family = fam;
    best = std::move(r), best_d = d;
  }
  if (!best) return std::nullopt;
  if (best->source.empty()) {
    try {
      best->source = generate_source(parse_spec(best->spec_text));
    } catch (const std::exception& e) {
      best->source = fmt::format("/* spec '{}': source not available ({}) */", best->spec_text, e.what());
    }
  }
  best->source = cut(best->source, max_chars);
  if (const auto prof = db.latest_profile(best->spec_hash, best->shape.m, best->shape.n, best->shape.k)) {
    std::string text;
    const auto metrics = nlohmann::json::parse(prof->metrics_json, nullptr, false);
    if (metrics.is_object())
      for (auto it = metrics.begin(); it != metrics.end(); ++it)
        text +=
            fmt::format("- {}: {}\n", it.key(),
                        it.value().is_number() ? fmt::format("{:.4g}", it.value().get<double>()) : it.value().dump());
    const auto stalls = nlohmann::json::parse(prof->stalls_json, nullptr, false);
    if (stalls.is_array() && !stalls.empty()) {
      text += "- top warp stall reasons (share of stall samples):";
      for (const auto& st : stalls)
        if (st.is_array() && st.size() == 2 && st[0].is_string() && st[1].is_number())
          text += fmt::format(" {} {:.1f}%;", st[0].get<std::string>(), 100 * st[1].get<double>());
      text += "\n";
    }
    best->metrics = text;
  }
  return best;
}

std::map<std::string, std::string> prompt_vars(const PromptInputs& in) {
  const Problem& p = in.problem;
  std::map<std::string, std::string> v;
  v["m"] = std::to_string(p.shape.m), v["n"] = std::to_string(p.shape.n), v["k"] = std::to_string(p.shape.k);
  v["shape"] = fmt::format("M={} N={} K={}", p.shape.m, p.shape.n, p.shape.k);
  v["layout"] = std::string(to_string(p.layout));
  v["layout_text"] = p.layout == Layout::NN ? "B is row-major K x N (element (k, n) at B[k * N + n])"
                                            : "B is column-major K x N (element (k, n) at B[n * K + k])";
  v["accum"] = std::string(to_string(p.accum));
  v["accum_text"] = p.accum == Accum::F32 ? "accumulate in fp32 (the result rounded to fp16 once, at the end)"
                                          : "accumulate in fp16 (CUBLAS_COMPUTE_16F semantics)";
  v["task"] = fmt::format(
      "Write the fastest CUDA kernel for C = A * B with A fp16 row-major {}x{}, {}, C fp16 row-major {}x{}; {}. "
      "Target: NVIDIA Hopper (sm_90a, H100/H200).",
      p.shape.m, p.shape.k, v["layout_text"], p.shape.m, p.shape.n, v["accum_text"]);
  try {
    v["abi"] = kernel_abi_text();
  } catch (const std::exception&) {
    v["abi"] = "(the kernel ABI header is not available on this machine)";
  }
  if (in.reference && !in.reference->source.empty()) {
    const auto& r = *in.reference;
    v["reference_source"] = r.source;
    v["reference_note"] =
        r.same_shape
            ? fmt::format("the fastest kernel measured so far for this shape on {}: {:.2f} us ({})", r.gpu, r.median_us,
                          r.spec_text)
            : fmt::format(
                  "the fastest kernel measured so far for the nearest shape M={} N={} K={} on {}: {:.2f} us ({})",
                  r.shape.m, r.shape.n, r.shape.k, r.gpu, r.median_us, r.spec_text);
    v["metrics"] = r.metrics;
  }
  v["errors"] = in.previous_errors;
  v["previous_source"] = in.previous_errors.empty() ? "" : in.previous_source;
  return v;
}

namespace {

struct Block {
  std::string lang, body;
  bool closed = false;
};

std::vector<Block> fenced_blocks(const std::string& text) {
  std::vector<Block> blocks;
  std::istringstream in(text);
  std::string line;
  Block cur;
  bool inside = false;
  std::string fence;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t lead = line.find_first_not_of(' ');
    std::string t = lead == std::string::npos ? "" : line.substr(lead);
    if (!inside) {
      if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) {
        fence = t.substr(0, 3);
        inside = true;
        cur = Block{};
        cur.lang = t.substr(3);
        cur.lang.erase(std::remove_if(cur.lang.begin(), cur.lang.end(), ::isspace), cur.lang.end());
        std::transform(cur.lang.begin(), cur.lang.end(), cur.lang.begin(), ::tolower);
      }
    } else if (t.rfind(fence, 0) == 0 && t.find_first_not_of(fence[0]) == std::string::npos) {
      cur.closed = true;
      blocks.push_back(cur);
      inside = false;
    } else {
      cur.body += line + "\n";
    }
  }
  if (inside) blocks.push_back(cur);  // unterminated
  return blocks;
}

bool code_lang(const std::string& l) {
  static const char* ok[] = {"", "cuda", "cu", "cpp", "c++", "c", "cxx", "cc", "h", "hpp", "cuh"};
  return std::find(std::begin(ok), std::end(ok), l) != std::end(ok);
}

// A block defines the entry point when it writes cudal2_run itself or exports the ABI through our
// kernel headers' shim (CUDAL2_EXPORT_KERNEL_ABI writes cudal2_run and the rest; our families'
// sources, rewritten by a model, use it).
bool defines_entry_point(const std::string& body) {
  return body.find("cudal2_run") != std::string::npos || body.find("CUDAL2_EXPORT_KERNEL_ABI") != std::string::npos;
}

}  // namespace

Extracted extract_code(const std::string& reply) {
  Extracted e;
  const auto blocks = fenced_blocks(reply);
  if (blocks.empty()) {
    e.error = "no-code";
    return e;
  }
  const Block* pick = nullptr;
  for (const auto& b : blocks)
    if (b.closed && code_lang(b.lang) && defines_entry_point(b.body)) pick = &b;
  if (pick) {
    e.source = pick->body;
    return e;
  }
  for (const auto& b : blocks)
    if (!b.closed && defines_entry_point(b.body)) {
      e.error = "unterminated";
      return e;
    }
  e.error = "no-entry-point";
  return e;
}

}  // namespace cudal2::llm
