// The `cublaslt` family on the GPU: cublaslt_space enumerates cuBLASLt's configurations behind its
// heuristic for three shapes (the heuristic's own suggestions rebuilt bytewise from their specs,
// then one-attribute variations, each accepted by cublasLtMatmulAlgoCheck); a few of each are
// compiled by the JIT, and the same specs run as the judge runs them (the call built from the
// spec's fields, no artifact), pass the full verification beside cuBLAS and cuBLASLt auto-tuning,
// with a timing table (graph timer; only correctness is asserted).
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <set>

#include "baselines/baselines.hpp"
#include "baselines/cublaslt_config.hpp"
#include "baselines/cublaslt_space.hpp"
#include "codegen/codegen.hpp"
#include "jit/compiler.hpp"
#include "jit_methods.hpp"
#include "judge/bench.hpp"
#include "runner/artifact.hpp"

namespace cudal2 {
namespace {

// The heuristic's first suggestion, then the first variation of each kind (origin) seen.
std::vector<LtCandidate> pick_few(const std::vector<LtCandidate>& all, size_t n) {
  std::vector<LtCandidate> out;
  std::set<std::string> kinds;
  for (const auto& c : all) {
    const auto kind = c.origin.substr(c.origin.find(' ') + 1);  // "heuristic #3" -> "#3"; "#0 tile" -> "tile"
    if (out.size() >= n) break;
    if (c.origin.rfind("heuristic", 0) == 0 ? !out.empty() : !kinds.insert(kind).second) continue;
    out.push_back(c);
  }
  return out;
}

std::vector<MethodFactory> compile_methods(const std::vector<LtCandidate>& cands) {
  std::vector<std::string> sources;
  for (const auto& c : cands) sources.push_back(generate_source(c.spec));
  const auto built = Compiler().compile_all(sources);
  std::vector<MethodFactory> out;
  for (size_t i = 0; i < cands.size(); ++i) {
    EXPECT_TRUE(built[i].ok()) << cands[i].spec.text() << "\n" << built[i].log;
    if (!built[i].ok()) continue;
    const std::string name = "lt" + std::to_string(i);
    std::printf("%-5s = %s  (%s, workspace %zu, compiled in %.1f s)\n", name.c_str(), cands[i].spec.text().c_str(),
                cands[i].origin.c_str(), cands[i].workspace, built[i].seconds);
    auto art = std::make_shared<Artifact>(built[i].artifact);
    const auto spec = cands[i].spec;
    out.push_back({name, false, [art, spec, name] { return make_artifact_runner(art, spec, name); }});
    // The same spec as the judge runs it during tuning: the call built from its fields, no artifact.
    const std::string judged = "cfg" + std::to_string(i);
    out.push_back({judged, false, [spec, judged] { return make_cublaslt_config_runner(spec, judged); }});
  }
  std::fflush(stdout);
  return out;
}

void check_space(const Shape& shape, Layout layout, Accum accum) {
  SCOPED_TRACE(shape.str());
  const auto all = cublaslt_space(shape, layout, accum, 48);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().origin, "heuristic #0");
  int picks = 0;
  std::set<std::string> texts;
  for (const auto& c : all) {
    EXPECT_EQ(c.spec.family, "cublaslt");
    EXPECT_EQ(c.spec.layout, layout);
    EXPECT_EQ(invalid_reason(c.spec), "") << c.spec.text();
    EXPECT_EQ(parse_spec(c.spec.text()).text(), c.spec.text());
    EXPECT_LE(c.workspace, kLibraryWorkspace);
    EXPECT_TRUE(texts.insert(c.spec.text()).second) << "duplicate " << c.spec.text();
    if (c.origin.rfind("heuristic", 0) == 0) {
      ++picks;
      EXPECT_TRUE(c.rebuilt_same) << "rebuilt from its spec, " << c.origin << " differs from the heuristic's algo";
    }
  }
  std::printf("%s %s: %zu specs, %d heuristic suggestions\n", shape.str().c_str(),
              std::string(to_string(layout)).c_str(), all.size(), picks);

  BenchOptions o;
  o.accum = accum;
  o.methods = compile_methods(pick_few(all, 5));
  for (const std::string n : {std::string("cublas-") + std::string(to_string(layout)),
                              std::string("cublaslt-autotune-") + std::string(to_string(layout))})
    o.methods.push_back({n, true, [n, accum] { return make_baseline(n, accum); }});
  o.shapes = {shape};
  o.reps = 10;
  o.progress = false;
  o.timers = {true, false, false, false};
  const auto r = run_bench(o);
  print_table(r, o);
  testing::expect_all_ok(r);
}

TEST(CublasLtFamilyGpu, SkinnyNn) { check_space({64, 4096, 4096}, Layout::NN, Accum::F32); }
TEST(CublasLtFamilyGpu, MediumTn) { check_space({1024, 1024, 1024}, Layout::TN, Accum::F32); }
TEST(CublasLtFamilyGpu, LargeNn) { check_space({4096, 4096, 4096}, Layout::NN, Accum::F32); }
TEST(CublasLtFamilyGpu, OddShapeFp16Accumulate) { check_space({1000, 136, 520}, Layout::TN, Accum::F16); }

}  // namespace
}  // namespace cudal2
