// KernelSpec validity, enumeration, canonical text and hash; codegen; a compile-only check of
// generated kernels through the JIT cache (no GPU needed to compile or to read the ABI back).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "codegen/codegen.hpp"
#include "codegen/spec.hpp"
#include "eval/artifact.hpp"
#include "jit/compiler.hpp"

namespace cudal2 {
namespace {

TEST(KernelSpec, CanonicalTextRoundTripsForTheWholeSpace) {
  for (auto layout : {Layout::NN, Layout::TN})
    for (auto acc : {Accum::F32, Accum::F16}) {
      const auto all = enumerate_sm90(layout, acc);
      ASSERT_FALSE(all.empty());
      std::set<std::string> hashes;
      for (const auto& s : all) {
        EXPECT_EQ(invalid_reason(s), "") << s.text();
        const auto back = parse_spec(s.text());
        ASSERT_EQ(back.text(), s.text());
        hashes.insert(s.hash());
      }
      EXPECT_EQ(hashes.size(), all.size()) << "hash collision or duplicate spec";
    }
}

TEST(KernelSpec, SpaceSizeIsDocumented) {
  // docs/kernel-space.md quotes these numbers; update both together.
  EXPECT_EQ(enumerate_sm90(Layout::NN, Accum::F32, false).size(), 368u);
  EXPECT_EQ(enumerate_sm90(Layout::NN, Accum::F32, true).size(), 10752u);
}

TEST(KernelSpec, HashIsStableAcrossBuilds) {
  KernelSpec s;  // defaults: sm90_cutlass nn f32 128x128x64 cooperative persistent
  EXPECT_EQ(s.text(),
            "sm90_cutlass nn f32 tile=128x128x64 cluster=1x1 mainloop=cooperative epilogue=tma scheduler=persistent "
            "stages=auto | raster=heuristic swizzle=1 decomposition=heuristic splits=1");
  EXPECT_EQ(s.hash(), fmt::format("{:016x}", fnv1a64(s.text())));
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);  // published FNV-1a test vector
  KernelSpec knob = s;
  knob.swizzle = 4;
  EXPECT_NE(knob.hash(), s.hash());
  EXPECT_EQ(knob.compile_hash(), s.compile_hash());  // runtime knobs share one build
}

TEST(KernelSpec, ValidityRules) {
  KernelSpec s;
  s.mainloop = Mainloop::Cooperative;
  s.tile_m = 64;
  EXPECT_NE(invalid_reason(s).find("cooperative"), std::string::npos);
  s = {};
  s.scheduler = Scheduler::StreamK;
  s.mainloop = Mainloop::Pingpong;
  EXPECT_NE(invalid_reason(s).find("stream-K"), std::string::npos);
  s = {};
  s.tile_m = 256, s.tile_n = 256, s.tile_k = 128, s.stages = 4;
  EXPECT_NE(invalid_reason(s).find("shared memory"), std::string::npos);
  s = {};
  s.splits = 4;
  EXPECT_NE(invalid_reason(s).find("stream-K"), std::string::npos);
  s = {};
  s.tile_n = 24;
  EXPECT_NE(invalid_reason(s).find("tile N"), std::string::npos);
  s = {};
  s.cluster_m = 3;
  EXPECT_NE(invalid_reason(s).find("cluster"), std::string::npos);
  EXPECT_EQ(shape_refusal(KernelSpec{}, {64, 64, 64}), "");
  EXPECT_NE(shape_refusal(KernelSpec{}, {64, 63, 64}).find("multiples of 8"), std::string::npos);
}

TEST(KernelSpec, ParseErrorsNameTheField) {
  auto err = [](const char* t) {
    try {
      parse_spec(t);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err("sm90_cutlass nn f32 tile=128x128").find("tile"), std::string::npos);
  EXPECT_NE(err("sm90_cutlass nn f32 mainloop=fast").find("mainloop='fast'"), std::string::npos);
  EXPECT_NE(err("sm80 nn f32").find("unknown family"), std::string::npos);
  EXPECT_NE(err("sm90_cutlass xx f32").find("layout"), std::string::npos);
  EXPECT_NE(err("sm90_cutlass nn f32 bogus=1").find("unknown field 'bogus'"), std::string::npos);
  EXPECT_NE(err("sm90_cutlass nn f32 tile=64x64x64").find("invalid spec"), std::string::npos);  // cooperative M 64
  EXPECT_EQ(parse_spec("sm90_cutlass tn f16 tile=64x64x64 mainloop=pingpong").tile_m, 64);
}

TEST(Codegen, DeterministicAndCarriesTheSpec) {
  KernelSpec s;
  s.layout = Layout::TN;
  s.scheduler = Scheduler::StreamK;
  const auto src = generate_source(s);
  EXPECT_EQ(src, generate_source(s));
  EXPECT_NE(src.find("cutlass::layout::ColumnMajor"), std::string::npos);
  EXPECT_NE(src.find("cutlass::gemm::StreamKScheduler"), std::string::npos);
  EXPECT_NE(src.find(s.compile_text()), std::string::npos);
  KernelSpec knob = s;
  knob.raster = Raster::AlongN;
  EXPECT_EQ(generate_source(knob), src);  // runtime knobs do not change the source
}

class JitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cudal2_jit_" + std::to_string(::getpid()));
    opt_.cache_dir = dir_.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  CompileOptions opt_;
};

TEST_F(JitTest, CompileErrorIsRecordedWithItsLog) {
  Compiler c(opt_);
  const auto r = c.compile("this is not CUDA;\n");
  EXPECT_EQ(r.status, "compile-error");
  EXPECT_NE(r.log.find("error"), std::string::npos);
  EXPECT_TRUE(c.compile("this is not CUDA;\n").cached);  // deterministic failures are cached too
}

TEST_F(JitTest, TimeoutKillsTheCompiler) {
  opt_.timeout = std::chrono::seconds(1);
  Compiler c(opt_);
  const auto r = c.compile(generate_source(KernelSpec{}));  // a CUTLASS kernel takes ~a minute
  EXPECT_EQ(r.status, "timeout");
  EXPECT_LT(r.seconds, 10);
}

// The real thing: two generated specs (NN cooperative persistent, TN pingpong), compiled in
// parallel, loaded back, their ABI answering without a GPU; a second compile hits the cache.
TEST_F(JitTest, GeneratedKernelsCompileLoadAndCache) {
  KernelSpec a;
  KernelSpec b;
  b.layout = Layout::TN;
  b.mainloop = Mainloop::Pingpong;
  b.tile_m = 64;
  b.tile_n = 128;
  b.cluster_m = 2;
  Compiler c(opt_);
  const auto rs = c.compile_all({generate_source(a), generate_source(b)});
  for (const auto& r : rs) {
    ASSERT_EQ(r.status, "ok") << r.log;
    EXPECT_FALSE(r.cached);
    Artifact art(r.artifact);
    EXPECT_EQ(art.abi_version(), 1);
  }
  EXPECT_EQ(Artifact(rs[0].artifact).describe(), a.compile_text());
  EXPECT_EQ(Artifact(rs[1].artifact).describe(), b.compile_text());
  const auto again = c.compile(generate_source(a));
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.artifact, rs[0].artifact);
  EXPECT_THROW(Artifact((dir_ / "missing.so").string()), RunnerError);
}

}  // namespace
}  // namespace cudal2
