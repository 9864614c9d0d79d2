// The `cublaslt` KernelSpec family without a GPU: canonical text and round trip, validity rules,
// the cluster-shape table against cublasLt.h, code generation, and a JIT build of one artifact
// (linked with cuBLASLt, exposing the kernel C ABI).
#include <cublasLt.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "codegen/codegen.hpp"
#include "codegen/family_cublaslt.hpp"
#include "codegen/spec.hpp"
#include "jit/compiler.hpp"
#include "kernels/cublaslt_plan.h"
#include "kernels/cudal2_kernel_abi.h"
#include "runner/artifact.hpp"

namespace cudal2 {
namespace {

constexpr const char* kText =
    "cublaslt tn f32 algo=66 tile=20 stages=35 reduction=2 swizzle=1 custom=3 inner=0 cluster=2x1 | splits=4";

TEST(CublasLtFamily, CanonicalTextRoundTrips) {
  const auto d = default_spec("cublaslt");
  EXPECT_EQ(d.text(),
            "cublaslt nn f32 algo=0 tile=0 stages=0 reduction=0 swizzle=0 custom=0 inner=0 cluster=auto | splits=1");
  EXPECT_EQ(parse_spec("cublaslt nn f32").text(), d.text());  // missing fields take the defaults
  const auto s = parse_spec(kText);
  EXPECT_EQ(s.text(), kText);
  EXPECT_EQ(s.family, "cublaslt");
  EXPECT_EQ(s.layout, Layout::TN);
  EXPECT_EQ(s.lt_algo, 66);
  EXPECT_EQ(s.lt_tile, 20);
  EXPECT_EQ(s.lt_stages, 35);
  EXPECT_EQ(s.lt_reduction, 2);
  EXPECT_EQ(s.lt_swizzle, 1);
  EXPECT_EQ(s.lt_custom, 3);
  EXPECT_EQ(s.cluster_m, 2);
  EXPECT_EQ(s.cluster_n, 1);
  EXPECT_EQ(s.splits, 4);
  EXPECT_EQ(s.swizzle, 1) << "the CUTLASS swizzle knob stays at its default";
  // Field order in the input does not matter; the text is canonical.
  EXPECT_EQ(parse_spec("cublaslt tn f32 cluster=2x1 custom=3 swizzle=1 reduction=2 stages=35 tile=20 algo=66 | "
                       "splits=4")
                .text(),
            kText);
  // splits is the runtime knob: one build for every split count.
  auto one = s;
  one.splits = 1;
  EXPECT_NE(one.hash(), s.hash());
  EXPECT_EQ(one.compile_hash(), s.compile_hash());
  auto f16 = parse_spec("cublaslt nn f16 algo=1 cluster=auto");
  EXPECT_EQ(f16.accum, Accum::F16);
  EXPECT_EQ(parse_spec(f16.text()).text(), f16.text());
}

// What the runtime reports running (cudal2_lt::config_text, src/kernels/cublaslt_plan.h) is the
// family's canonical text, so it can go into a table as it stands.
TEST(CublasLtFamily, RuntimeConfigTextIsTheCanonicalSpec) {
  cudal2_lt::Config c;
  c.algo = 66, c.tile = 20, c.stages = 35, c.reduction = 2, c.swizzle = 1, c.custom = 3, c.inner = 0;
  c.cluster = cublaslt_cluster_id(2, 1), c.splits = 4;
  char text[256];
  cudal2_lt::config_text(c, /*tn=*/true, /*f16=*/false, text, sizeof text);
  EXPECT_STREQ(text, kText);
  EXPECT_EQ(parse_spec(text).text(), kText);
  c.cluster = 0, c.splits = 1;
  cudal2_lt::config_text(c, /*tn=*/false, /*f16=*/true, text, sizeof text);
  EXPECT_EQ(parse_spec(text).text(), text) << "cluster id 0 is auto";
  EXPECT_NE(std::string(text).find("cublaslt nn f16 "), std::string::npos) << text;
  EXPECT_NE(std::string(text).find(" cluster=auto "), std::string::npos) << text;
}

TEST(CublasLtFamily, EveryClusterShapeRoundTrips) {
  std::set<std::string> texts;
  for (int id : cublaslt_cluster_ids()) {
    auto s = default_spec("cublaslt");
    std::tie(s.cluster_m, s.cluster_n) = cublaslt_cluster_shape(id);
    EXPECT_EQ(cublaslt_cluster_id(s.cluster_m, s.cluster_n), id);
    EXPECT_EQ(invalid_reason(s), "");
    EXPECT_EQ(parse_spec(s.text()).text(), s.text());
    texts.insert(s.text());
  }
  EXPECT_EQ(texts.size(), cublaslt_cluster_ids().size());
}

TEST(CublasLtFamily, ClusterTableMatchesCublasLtHeader) {
#define CUDAL2_EXPECT_CLUSTER(m, n) EXPECT_EQ(cublaslt_cluster_id(m, n), CUBLASLT_CLUSTER_SHAPE_##m##x##n##x1)
  EXPECT_EQ(cublaslt_cluster_id(0, 0), CUBLASLT_CLUSTER_SHAPE_AUTO);
  CUDAL2_EXPECT_CLUSTER(1, 1);
  CUDAL2_EXPECT_CLUSTER(2, 1);
  CUDAL2_EXPECT_CLUSTER(4, 1);
  CUDAL2_EXPECT_CLUSTER(1, 2);
  CUDAL2_EXPECT_CLUSTER(2, 2);
  CUDAL2_EXPECT_CLUSTER(4, 2);
  CUDAL2_EXPECT_CLUSTER(1, 4);
  CUDAL2_EXPECT_CLUSTER(2, 4);
  CUDAL2_EXPECT_CLUSTER(4, 4);
  CUDAL2_EXPECT_CLUSTER(8, 1);
  CUDAL2_EXPECT_CLUSTER(1, 8);
  CUDAL2_EXPECT_CLUSTER(8, 2);
  CUDAL2_EXPECT_CLUSTER(2, 8);
  CUDAL2_EXPECT_CLUSTER(16, 1);
  CUDAL2_EXPECT_CLUSTER(1, 16);
  CUDAL2_EXPECT_CLUSTER(3, 1);
  CUDAL2_EXPECT_CLUSTER(5, 1);
  CUDAL2_EXPECT_CLUSTER(6, 1);
  CUDAL2_EXPECT_CLUSTER(7, 1);
  CUDAL2_EXPECT_CLUSTER(9, 1);
  CUDAL2_EXPECT_CLUSTER(10, 1);
  CUDAL2_EXPECT_CLUSTER(11, 1);
  CUDAL2_EXPECT_CLUSTER(12, 1);
  CUDAL2_EXPECT_CLUSTER(13, 1);
  CUDAL2_EXPECT_CLUSTER(14, 1);
  CUDAL2_EXPECT_CLUSTER(15, 1);
  CUDAL2_EXPECT_CLUSTER(3, 2);
  CUDAL2_EXPECT_CLUSTER(5, 2);
  CUDAL2_EXPECT_CLUSTER(6, 2);
  CUDAL2_EXPECT_CLUSTER(7, 2);
  CUDAL2_EXPECT_CLUSTER(1, 3);
  CUDAL2_EXPECT_CLUSTER(2, 3);
  CUDAL2_EXPECT_CLUSTER(3, 3);
  CUDAL2_EXPECT_CLUSTER(4, 3);
  CUDAL2_EXPECT_CLUSTER(5, 3);
  CUDAL2_EXPECT_CLUSTER(3, 4);
  CUDAL2_EXPECT_CLUSTER(1, 5);
  CUDAL2_EXPECT_CLUSTER(2, 5);
  CUDAL2_EXPECT_CLUSTER(3, 5);
  CUDAL2_EXPECT_CLUSTER(1, 6);
  CUDAL2_EXPECT_CLUSTER(2, 6);
  CUDAL2_EXPECT_CLUSTER(1, 7);
  CUDAL2_EXPECT_CLUSTER(2, 7);
  CUDAL2_EXPECT_CLUSTER(1, 9);
  CUDAL2_EXPECT_CLUSTER(1, 10);
  CUDAL2_EXPECT_CLUSTER(1, 11);
  CUDAL2_EXPECT_CLUSTER(1, 12);
  CUDAL2_EXPECT_CLUSTER(1, 13);
  CUDAL2_EXPECT_CLUSTER(1, 14);
  CUDAL2_EXPECT_CLUSTER(1, 15);
#undef CUDAL2_EXPECT_CLUSTER
  EXPECT_EQ(cublaslt_cluster_ids().size(), static_cast<size_t>(CUBLASLT_CLUSTER_SHAPE_END - 1))
      << "a cluster shape id of cublasLt.h is missing from the table (id 1 is unused)";
}

TEST(CublasLtFamily, ValidityRulesAndParseErrors) {
  auto why = [](const std::string& text) {
    try {
      return invalid_reason(parse_spec(text));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(why(kText), "");
  EXPECT_NE(why("cublaslt nn f32 reduction=3").find("reduction 3"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 swizzle=2").find("swizzle 2"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 cluster=4x8").find("not a cuBLASLt cluster shape"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 cluster=2").find("cluster='2'"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 algo=-1").find("algo='-1'"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 tile=128x128x64").find("tile='128x128x64'"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 | splits=0").find("splits"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 warps=2x2").find("unknown field 'warps' for family cublaslt"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 | raster=along_m").find("unknown field 'raster'"), std::string::npos);
  EXPECT_NE(why("cublaslt nn f32 algo=1 algo=2").find("given twice"), std::string::npos);
  auto knob = default_spec("cublaslt");
  knob.decomposition = Decomposition::SplitK;
  EXPECT_NE(invalid_reason(knob).find("no raster, decomposition"), std::string::npos);
  // Its space is per GPU and shape: cublaslt_neighbourhood, not enumerate_specs.
  EXPECT_THROW(enumerate_specs("cublaslt", Layout::NN, Accum::F32), InputError);
  EXPECT_EQ(shape_refusal(parse_spec(kText), {7, 65, 1000}), "") << "cublasLtMatmulAlgoCheck decides at run time";
}

TEST(CublasLtFamily, CodegenCarriesTheConfiguration) {
  const auto s = parse_spec(kText);
  const auto src = generate_source(s);
  EXPECT_EQ(src, generate_source(s));
  EXPECT_NE(src.find("#include \"cublaslt_gemm.h\""), std::string::npos);
  // The JIT's link marker, and the configuration as template arguments: layout, accumulator, algo,
  // tile, stages, reduction, swizzle, custom, inner, cluster id (CUBLASLT_CLUSTER_SHAPE_2x1x1 = 3).
  for (const char* line : {"#define CUDAL2_LINK_CUBLASLT 1",
                           "using cudal2_kernel = cudal2_cublaslt::Gemm<cudal2_cublaslt::Config<true, false, 66, 20, "
                           "35, 2, 1, 3, 0, 3>>;"})
    EXPECT_NE(src.find(line), std::string::npos) << line << "\n" << src;
  EXPECT_NE(src.find("CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, \"" + s.compile_text() + "\")"), std::string::npos);
  auto eight = s;
  eight.splits = 8;
  EXPECT_EQ(generate_source(eight), src) << "split count is passed at run time";
  EXPECT_NE(generate_source(parse_spec("cublaslt nn f32 cluster=auto")).find(", 0>>;"), std::string::npos);
}

// The artifact builds (host code only, a couple of seconds), links libcublasLt and answers the
// ABI. Without a GPU can_implement refuses with cuBLASLt's status name instead of crashing.
TEST(CublasLtFamily, ArtifactCompilesLinksCublasLtAndAnswersTheAbi) {
  const auto dir = std::filesystem::temp_directory_path() / ("cudal2_lt_jit_" + std::to_string(::getpid()));
  CompileOptions opt;
  opt.cache_dir = dir.string();
  Compiler c(opt);
  const auto s = parse_spec(kText);
  const auto r = c.compile(generate_source(s));
  ASSERT_EQ(r.status, "ok") << r.log;
  std::ifstream in(r.artifact, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_NE(bytes.str().find("libcublasLt.so"), std::string::npos) << "the artifact must link cuBLASLt";
  {
    Artifact art(r.artifact);
    EXPECT_EQ(art.abi_version(), CUDAL2_KERNEL_ABI_VERSION);
    EXPECT_EQ(art.describe(), s.compile_text());
    cudal2_gemm_args a{};
    a.m = 64, a.n = 64, a.k = 64, a.swizzle = 1, a.splits = 1;
    a.raster = 1;
    EXPECT_NE(art.can_implement(a).find("no raster"), std::string::npos);
    a.raster = 0;
    const auto why = art.can_implement(a);  // a GPU may or may not accept this configuration
    if (!why.empty()) EXPECT_NE(why.find("CUBLAS_STATUS_"), std::string::npos) << why;
    a.m = 0;
    EXPECT_NE(art.can_implement(a).find("M, N and K"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cudal2
