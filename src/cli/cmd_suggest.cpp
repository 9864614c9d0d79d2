// `cudal2 suggest --shape M,N,K [--layout nn|tn] --policy FILE`: the rl policy's best spec for a
// shape without evaluating anything (src/search/rl_policy.hpp, best_guess), for shapes nobody
// tuned. No GPU needed.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.hpp"
#include "cli/shape_args.hpp"
#include "core/input_file.hpp"
#include "core/roofline.hpp"
#include "search/rl_policy.hpp"
#include "search/space.hpp"
#include "store/error.hpp"

namespace cudal2::cli {

namespace {

struct SuggestArgs {
  std::vector<std::string> shapes;
  std::vector<std::string> shape_files;  // --shapes FILE: more M,N,K lines
  bool spec_list = false;                // "M,N,K SPEC" lines of the top pick: `cudal2 eval --spec-list`
  std::string layout = "nn", accum = "f32", policy, families, space = "full";
  std::string candidates;  // --candidates FILE: per-problem spaces (e.g. cublaslt's, recorded on a GPU)
  int top = 1;
  bool json = false;
};

// --candidates FILE: lines "M,N,K<TAB>layout<TAB>spec text" ('#' comments): the specs each problem
// may be given, for families whose space is per shape and needs a GPU to list (cublaslt: cuBLASLt's
// suggestions, as `cudal2 tune` recorded them). Problems with no line are skipped, with a note.
// A problem's lines keep their order: its space as the lt-space judge lists it, cuBLASLt's
// heuristic suggestions first, best first (the policy treats the first cublaslt spec as the
// heuristic's top-1: src/search/rl_policy.hpp, "Ranked spaces").
std::map<std::pair<std::string, std::string>, std::vector<KernelSpec>> read_candidates(const std::string& path) {
  std::istringstream in(read_input_file(path, "candidates file"));
  std::map<std::pair<std::string, std::string>, std::vector<KernelSpec>> out;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const auto t1 = line.find('\t'), t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string::npos)
      throw InputError(fmt::format("{}:{}: expected M,N,K<TAB>layout<TAB>spec", path, line_no));
    const Shape sh = parse_shape(line.substr(0, t1));
    const std::string layout(to_string(parse_layout(line.substr(t1 + 1, t2 - t1 - 1))));
    out[{sh.str(), layout}].push_back(parse_spec(line.substr(t2 + 1)));
  }
  return out;
}

// One pick of --json output; top1: the spec is the first of the problem's --candidates (the
// heuristic's top-1 of a cublaslt space).
nlohmann::json pick_json(const Problem& p, const KernelSpec& spec, double us, bool top1 = false) {
  return {{"m", p.shape.m},
          {"n", p.shape.n},
          {"k", p.shape.k},
          {"layout", to_string(p.layout)},
          {"accum", to_string(p.accum)},
          {"spec", spec.text()},
          {"hash", spec.hash()},
          {"predicted_us", us},
          {"top1", top1}};
}

// --shape values and the M,N,K of every --shapes file, as "M,N,K" texts.
std::vector<std::string> all_shapes(const SuggestArgs& a) {
  std::vector<std::string> out = a.shapes;
  for (const auto& f : a.shape_files)
    for (const auto& sh : read_shapes_file(f)) out.push_back(fmt::format("{},{},{}", sh.m, sh.n, sh.k));
  if (out.empty()) throw InputError("no shape: give --shape M,N,K or --shapes FILE");
  return out;
}

int run(const SuggestArgs& a_in) {
  SuggestArgs a = a_in;
  a.shapes = all_shapes(a_in);
  if (a.spec_list) a.top = 1;
  if (a.top < 1) throw InputError("--top must be at least 1");
  auto policy = search::RlPolicy::from_file(a.policy);
  if (!a.candidates.empty()) {
    const auto cands = read_candidates(a.candidates);
    const Accum accum = parse_accum(a.accum);
    nlohmann::json out = nlohmann::json::array();
    for (const auto& text : a.shapes) {
      const Problem p{parse_shape(text), parse_layout(a.layout), accum};
      const auto it = cands.find({p.shape.str(), std::string(to_string(p.layout))});
      std::vector<std::pair<KernelSpec, double>> ranked;
      if (it != cands.end()) ranked = policy.rank(p, it->second, a.top);
      if (ranked.empty()) {
        std::fprintf(stderr, "cudal2 suggest: no valid candidate for %s %s in %s\n", p.shape.str().c_str(),
                     std::string(to_string(p.layout)).c_str(), a.candidates.c_str());
        continue;
      }
      for (const auto& [spec, us] : ranked) {
        const bool top1 = spec == it->second.front();
        if (a.spec_list)
          std::printf("%lld,%lld,%lld %s\n", (long long)p.shape.m, (long long)p.shape.n, (long long)p.shape.k,
                      spec.text().c_str());
        else if (a.json)
          out.push_back(pick_json(p, spec, us, top1));
        else
          std::printf("%s %s: %s   predicted %.2f us%s\n", p.shape.str().c_str(),
                      std::string(to_string(p.layout)).c_str(), spec.text().c_str(), us,
                      top1 ? " (the first candidate: the heuristic's top-1)" : "");
      }
    }
    if (a.json)
      std::printf("%s\n", out.dump(1).c_str());
    else if (!a.spec_list)
      std::printf("zero-shot rule: %s\n", policy.zero_shot_rule().c_str());
    return 0;
  }
  auto families = a.families.empty() ? policy.families_seen() : split_list(a.families);
  if (families.empty())
    throw InputError(fmt::format("policy file '{}' has no measurements: pass --families", a.policy));
  // cublaslt's space is cuBLASLt's answer on a GPU for one shape: not a zero-shot choice.
  const auto usable = search::shape_independent(families);
  if (usable.size() != families.size())
    std::fprintf(stderr, "cudal2 suggest: leaving out families whose space needs a GPU (cublaslt)\n");
  if (usable.empty()) throw InputError("no family to suggest from (cublaslt needs a GPU: use `cudal2 tune`)");
  const Accum accum = parse_accum(a.accum);
  const auto space = search::search_space(usable, a.space, accum);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& text : a.shapes) {
    const Problem p{parse_shape(text), parse_layout(a.layout), accum};
    const auto ranked = policy.rank(p, space, a.top);
    if (ranked.empty())
      throw InputError(fmt::format("no valid spec of {} for {}", fmt::join(usable, ", "), p.shape.str()));
    if (a.spec_list) {
      std::printf("%lld,%lld,%lld %s\n", (long long)p.shape.m, (long long)p.shape.n, (long long)p.shape.k,
                  ranked.front().first.text().c_str());
      continue;
    }
    if (a.json) {
      for (const auto& [spec, us] : ranked) out.push_back(pick_json(p, spec, us));
      continue;
    }
    std::printf("%s %s %s: zero-shot pick (not measured; policy %s, %zu measurements)\n", p.shape.str().c_str(),
                std::string(to_string(p.layout)).c_str(), std::string(to_string(p.accum)).c_str(), a.policy.c_str(),
                policy.observations());
    int i = 0;
    for (const auto& [spec, us] : ranked) {
      if (us > 0)
        std::printf("  %d. %s   predicted %.2f us, %.1f TFLOP/s\n", ++i, spec.text().c_str(), us,
                    tflops_at(p.shape, us));
      else
        std::printf("  %d. %s\n", ++i, spec.text().c_str());
    }
  }
  if (a.json) std::printf("%s\n", out.dump(1).c_str());
  return 0;
}

}  // namespace

Run add_suggest(CLI::App& app, const Context&) {
  auto a = std::make_shared<SuggestArgs>();
  auto* cmd = &app;
  cmd->add_option("--shape", a->shapes, "Problem M,N,K (repeatable)");
  cmd->add_option("--shapes", a->shape_files, "File with one M,N,K per line ('#' comments; repeatable)");
  cmd->add_option("--layout", a->layout, "Layout of B: nn or tn")->capture_default_str();
  cmd->add_option("--accum", a->accum, "Accumulator: f32 or f16")->capture_default_str();
  cmd->add_option("--policy,--policy-file", a->policy, "Policy file written by `cudal2 tune --search rl`")->required();
  cmd->add_option("--families", a->families, "Families to choose from (default: those the policy has measured)");
  cmd->add_option("--space", a->space, "full or core (docs/tuning.md)")->capture_default_str();
  cmd->add_option("--top", a->top, "Print the N best predictions")->capture_default_str();
  cmd->add_flag("--json", a->json, "JSON output (for the runtime and scripts)");
  cmd->add_flag("--spec-list", a->spec_list,
                "One 'M,N,K SPEC' line per shape (the top pick): the input of `cudal2 eval --spec-list`, which "
                "measures each pick against cuBLASLt's heuristic before `cudal2 export` may ship it");
  cmd->add_option("--candidates", a->candidates,
                  "Choose among the specs this file lists per problem (lines M,N,K<TAB>layout<TAB>spec), e.g. "
                  "cublaslt's recorded space; --families and --space are then ignored");
  return [a] { return run(*a); };
}

}  // namespace cudal2::cli
