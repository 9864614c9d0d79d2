#include "jit_methods.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "codegen/codegen.hpp"
#include "jit/compiler.hpp"
#include "runner/artifact.hpp"

namespace cudal2::testing {

std::vector<MethodFactory> compile_specs(const std::vector<std::string>& texts, const std::string& prefix) {
  std::vector<KernelSpec> specs;
  std::vector<std::string> sources;
  for (const auto& t : texts) {
    specs.push_back(parse_spec(t));
    sources.push_back(generate_source(specs.back()));
  }
  const auto built = Compiler().compile_all(sources);
  std::vector<MethodFactory> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_TRUE(built[i].ok()) << texts[i] << "\n" << built[i].log;
    if (!built[i].ok()) continue;
    const std::string name = (prefix.empty() ? specs[i].family : prefix) + std::to_string(i);
    std::printf("%-8s = %s  (compiled in %.1f s%s)\n", name.c_str(), specs[i].text().c_str(), built[i].seconds,
                built[i].cached ? ", cached" : "");
    auto art = std::make_shared<Artifact>(built[i].artifact);
    const auto spec = specs[i];
    // make_artifact_runner gives each artifact a private, zero-filled, guarded workspace.
    out.push_back({name, false, [art, spec, name] { return make_artifact_runner(art, spec, name); }});
  }
  std::fflush(stdout);
  return out;
}

BenchReport bench_specs(const std::vector<std::string>& specs, const std::vector<Shape>& shapes, Accum accum,
                        const std::string& prefix, const TimerSet& timers) {
  BenchOptions o;
  o.accum = accum;
  o.timers = timers;
  o.methods = compile_specs(specs, prefix);
  o.shapes = shapes;
  o.reps = 3;
  o.progress = false;
  const auto r = run_bench(o);
  print_table(r, o);
  return r;
}

void expect_all_ok(const BenchReport& r) {
  for (const auto& sr : r.shapes)
    for (const auto& mr : sr.methods) {
      if (mr.baseline) continue;
      EXPECT_EQ(mr.status, Status::Ok) << sr.shape.str() << " " << mr.method << ": " << mr.reason << " "
                                       << mr.exact.failure << " " << mr.exact.detail << " " << mr.normal.failure << " "
                                       << mr.normal.detail;
    }
}

}  // namespace cudal2::testing
