// KernelSpec validity, enumeration, canonical text and hash; codegen; a compile-only check of
// generated kernels through the JIT cache (no GPU needed to compile or to read the ABI back).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "codegen/codegen.hpp"
#include "codegen/family.hpp"
#include "codegen/spec.hpp"
#include "jit/compiler.hpp"
#include "kernels/cudal2_kernel_abi.h"
#include "kernels/mma_plan.h"
#include "runner/artifact.hpp"

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

// ---- our own families: mma and tiny ----

TEST(KernelSpec, OwnFamiliesRoundTripWithUniqueHashes) {
  for (const char* family : {"mma", "tiny", "lat", "lat_staged"})
    for (auto layout : {Layout::NN, Layout::TN})
      for (auto acc : {Accum::F32, Accum::F16}) {
        const auto all = enumerate_specs(family, layout, acc);
        ASSERT_FALSE(all.empty());
        std::set<std::string> hashes, builds;
        for (const auto& s : all) {
          EXPECT_EQ(s.family, family);
          EXPECT_EQ(invalid_reason(s), "") << s.text();
          ASSERT_EQ(parse_spec(s.text()).text(), s.text());
          EXPECT_EQ(shape_refusal(s, {7, 65, 1000}), "") << "mma/tiny/lat/lat_staged run any shape";
          hashes.insert(s.hash());
          builds.insert(s.compile_hash());
        }
        EXPECT_EQ(hashes.size(), all.size()) << "hash collision or duplicate spec";
        EXPECT_EQ(builds.size(), enumerate_specs(family, layout, acc, false).size());
      }
}

TEST(KernelSpec, OwnFamiliesSpaceSizeIsDocumented) {
  // docs/kernel-space.md quotes these numbers; update both together.
  EXPECT_EQ(known_families(), (std::vector<std::string>{"sm90_cutlass", "mma", "tiny", "wgmma", "wgmma_swapab", "lat",
                                                        "lat_staged", "stream", "stream_sweep"}));
  // 81 cooperative + 66 ping-pong configurations
  EXPECT_EQ(enumerate_specs("wgmma", Layout::NN, Accum::F32, false).size(), 147u);
  // x (raster 3 x swizzle 4 + splits auto, 2, 4, 8, 16); ping-pong: x (raster 3 x swizzle 4)
  EXPECT_EQ(enumerate_specs("wgmma", Layout::TN, Accum::F16, true).size(), 81u * 17 + 66u * 12);
  // tiles {8,16,32,64} x {64,128} x stages {4,8,12}, less 64x128 and 32x128 at 12 (shared memory)
  EXPECT_EQ(enumerate_specs("wgmma_swapab", Layout::NN, Accum::F32, false).size(), 22u);
  EXPECT_EQ(enumerate_specs("wgmma_swapab", Layout::TN, Accum::F16, true).size(), 110u);  // x splits auto,1,2,4,8
  EXPECT_EQ(enumerate_specs("mma", Layout::NN, Accum::F32, false).size(), 57u);
  EXPECT_EQ(enumerate_specs("mma", Layout::TN, Accum::F16, true).size(), 342u);  // x splits 1,2,4,8,16,32
  EXPECT_EQ(enumerate_specs("tiny", Layout::NN, Accum::F32, false).size(), 96u);
  EXPECT_EQ(enumerate_specs("tiny", Layout::TN, Accum::F16, true).size(), 96u);  // splits=1 only
  // tiny's 96 tiles at 2 stages, and the 60 whose k-block fits 32 fragment registers at 4
  EXPECT_EQ(enumerate_specs("lat", Layout::NN, Accum::F32, false).size(), 156u);
  // x splits 1, 2, 4, 8, 16 (one cluster) and 32, 64, 128 (groups of clusters)
  EXPECT_EQ(enumerate_specs("lat", Layout::TN, Accum::F16, true).size(), 156u * 8);
  // 7 tiles x (tile K, stages) {64/4, 64/8, 32/8} x kwarps {1, 2, 4}: 4 with 4-warp tiles at
  // tile K 64, 2 otherwise (16 warps, k steps split evenly), less 128x128 at 64/8 (shared memory)
  EXPECT_EQ(enumerate_specs("lat_staged", Layout::NN, Accum::F32, false).size(), 48u);
  EXPECT_EQ(enumerate_specs("lat_staged", Layout::TN, Accum::F16, true).size(), 48u * 5);  // x splits 1..16
  EXPECT_EQ(enumerate_specs("sm90_cutlass", Layout::NN, Accum::F32, false).size(), 368u);
  EXPECT_THROW(enumerate_specs("sm80", Layout::NN, Accum::F32), InputError);
}

TEST(KernelSpec, OwnFamiliesCanonicalTextAndHash) {
  const auto mma = default_spec("mma");
  EXPECT_EQ(mma.text(), "mma nn f32 tile=64x64x32 warps=2x2 stages=3 | splits=1");
  EXPECT_EQ(mma.compile_text(), "mma nn f32 tile=64x64x32 warps=2x2 stages=3");
  EXPECT_EQ(mma.hash(), "2bea22d7f53cd2cf");               // pinned: the store and the compile cache key on it
  EXPECT_EQ(parse_spec("mma nn f32").text(), mma.text());  // missing fields take the family's defaults
  const auto tiny = default_spec("tiny");
  EXPECT_EQ(tiny.text(), "tiny nn f32 tile=32x32x64 warps=1x1 kwarps=1 | splits=1");
  EXPECT_EQ(tiny.hash(), "c6593ff011400586");
  EXPECT_EQ(default_spec("lat").text(), "lat nn f32 tile=32x32x64 warps=1x1 kwarps=1 | splits=1");
  // stages is written only when it is not 2: the two-deep texts (and hashes) stay as stored
  EXPECT_EQ(parse_spec("lat tn f32 tile=16x16x64 kwarps=8 stages=2").text(),
            "lat tn f32 tile=16x16x64 warps=1x1 kwarps=8 | splits=1");
  EXPECT_EQ(parse_spec("lat tn f32 tile=16x16x64 kwarps=8 stages=4 | splits=2").text(),
            "lat tn f32 tile=16x16x64 warps=1x1 kwarps=8 stages=4 | splits=2");
  EXPECT_EQ(default_spec("lat_staged").text(),
            "lat_staged nn f32 tile=32x32x64 warps=2x2 kwarps=1 stages=8 | splits=1");
  EXPECT_EQ(parse_spec("lat_staged tn f32 tile=128x128x32 warps=4x2 kwarps=2 stages=8 | splits=16").warps_k, 2);
  const auto s = parse_spec("mma tn f16 tile=32x128x64 warps=1x4 stages=4 | splits=8");
  EXPECT_EQ(s.layout, Layout::TN);
  EXPECT_EQ(s.accum, Accum::F16);
  EXPECT_EQ(s.tile_m, 32);
  EXPECT_EQ(s.tile_n, 128);
  EXPECT_EQ(s.tile_k, 64);
  EXPECT_EQ(s.warps_m, 1);
  EXPECT_EQ(s.warps_n, 4);
  EXPECT_EQ(s.stages, 4);
  EXPECT_EQ(s.splits, 8);
  KernelSpec one = s;
  one.splits = 1;
  EXPECT_NE(one.hash(), s.hash());
  EXPECT_EQ(one.compile_hash(), s.compile_hash());  // splits is a runtime knob
  EXPECT_EQ(parse_spec("tiny tn f32 tile=16x32x32 warps=1x2 kwarps=4").warps_k, 4);
  EXPECT_EQ(KernelSpec{}.text(), default_spec("sm90_cutlass").text());
}

TEST(KernelSpec, OwnFamiliesValidityRules) {
  auto why = [](const char* text) {
    KernelSpec s = default_spec(std::string_view(text).substr(0, std::string_view(text).find(' ')));
    try {
      s = parse_spec(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return invalid_reason(s);
  };
  EXPECT_EQ(why("mma nn f32 tile=128x128x64 warps=2x4 stages=5"), "");
  EXPECT_EQ(why("mma tn f32 tile=64x256x64 warps=1x8 stages=5"), "");  // 225 KB of shared memory: fits
  EXPECT_NE(why("mma nn f32 tile=128x256x32 warps=2x4 stages=3").find("accumulator"), std::string::npos);
  EXPECT_NE(why("mma nn f32 tile=16x64x32 warps=2x1 stages=3").find("below 16x16"), std::string::npos);
  EXPECT_NE(why("mma nn f32 tile=64x64x48").find("tile K"), std::string::npos);
  EXPECT_NE(why("mma nn f32 tile=64x64x32 warps=4x4").find("at most 8 warps"), std::string::npos);
  EXPECT_NE(why("mma nn f32 stages=9").find("stages"), std::string::npos);
  EXPECT_NE(why("mma tn f32 tile=64x256x64 warps=1x8 stages=6").find("shared memory"), std::string::npos);
  EXPECT_EQ(why("mma nn f32 tile=64x64x64 warps=2x2 stages=8"), "");
  EXPECT_NE(why("mma nn f32 | splits=65").find("splits"), std::string::npos);
  EXPECT_EQ(why("mma nn f32 | splits=64"), "");
  EXPECT_NE(why("tiny nn f32 | splits=2").find("splits=1"), std::string::npos);
  EXPECT_NE(why("tiny nn f32 tile=64x32x64 warps=1x1").find("warp tile M"), std::string::npos);
  EXPECT_NE(why("tiny nn f32 tile=32x32x128").find("fragment registers"), std::string::npos);
  EXPECT_EQ(why("tiny nn f32 tile=16x16x128"), "");
  EXPECT_NE(why("tiny nn f32 tile=32x32x32 warps=2x2 kwarps=4").find("at most 8 warps"), std::string::npos);
  // wgmma's 32-wide tile: both layouts, 1x2 clusters; a 2x1 cluster only where B is K-major.
  EXPECT_EQ(why("wgmma nn f32 tile=64x32x64 cluster=1x2 stages=8"), "");
  EXPECT_EQ(why("wgmma tn f32 tile=128x32x64 cluster=2x1 stages=8"), "");
  EXPECT_NE(why("wgmma nn f32 tile=128x32x64 cluster=2x1 stages=8").find("2x1"), std::string::npos);
  EXPECT_NE(why("wgmma nn f32 tile=64x16x64").find("tile N 16"), std::string::npos);
  EXPECT_EQ(why("wgmma nn f32 tile=64x32x64 cluster=1x1 stages=15"), "");  // 15 x 12 KB: fits
  EXPECT_NE(why("wgmma nn f32 tile=64x32x64 cluster=1x1 stages=16").find("2..15"), std::string::npos);
  EXPECT_NE(why("wgmma nn f32 tile=128x64x64 cluster=1x1 stages=12").find("shared memory"), std::string::npos);
  // lat: tiny's tile rules, splits are the CTAs of one cluster (1..16) or groups of clusters of
  // 8 (24..128 in steps of 8), one reduction slot even without kwarps.
  EXPECT_EQ(why("lat tn f32 tile=32x32x64 warps=1x1 kwarps=4 | splits=16"), "");
  EXPECT_NE(why("lat tn f32 tile=32x32x64 | splits=17").find("splits=1..16"), std::string::npos);
  EXPECT_NE(why("lat tn f32 tile=32x32x64 | splits=20").find("steps of 8"), std::string::npos);
  EXPECT_NE(why("lat tn f32 tile=32x32x64 | splits=136").find("24..128"), std::string::npos);
  EXPECT_EQ(why("lat tn f32 tile=32x32x64 | splits=24"), "");
  EXPECT_EQ(why("lat tn f32 tile=32x32x64 | splits=128"), "");
  EXPECT_NE(why("lat nn f32 tile=64x32x64 warps=1x1").find("warp tile M"), std::string::npos);
  EXPECT_NE(why("lat nn f32 tile=64x64x32 warps=2x2 kwarps=4").find("at most 8 warps"), std::string::npos);
  EXPECT_NE(why("lat nn f32 tile=32x32x64 stages=4").find("fragment registers"), std::string::npos);
  EXPECT_NE(why("lat nn f32 tile=16x16x64 stages=9").find("stages 9 not in 2..8"), std::string::npos);
  EXPECT_EQ(why("lat nn f32 tile=16x16x64 stages=4"), "");
  // lat_staged: mma's tile rules, deeper rings (up to 16 stages), splits only within one cluster.
  EXPECT_EQ(why("lat_staged tn f32 tile=16x64x64 warps=1x4 kwarps=4 stages=16 | splits=16"), "");
  EXPECT_NE(why("lat_staged tn f32 tile=32x32x32 kwarps=4").find("evenly"), std::string::npos);
  EXPECT_NE(why("lat_staged tn f32 tile=128x128x64 warps=4x2 kwarps=4 stages=4").find("over 16"), std::string::npos);
  EXPECT_NE(why("lat_staged tn f32 kwarps=3").find("kwarps 3"), std::string::npos);
  EXPECT_EQ(why("lat_staged tn f32 tile=32x32x128 warps=1x1 kwarps=8 stages=12"), "");
  EXPECT_NE(why("lat_staged tn f32 tile=32x32x128 warps=1x1 kwarps=8 stages=16").find("shared memory"),
            std::string::npos);
  EXPECT_NE(why("lat_staged tn f32 tile=32x32x256").find("tile K 256"), std::string::npos);
  EXPECT_NE(why("lat_staged tn f32 | splits=17").find("splits must be 1..16"), std::string::npos);
  EXPECT_NE(why("lat_staged tn f32 | splits=32").find("one cluster"), std::string::npos);
  EXPECT_NE(why("lat_staged nn f32 tile=128x128x64 warps=4x2 stages=8").find("shared memory"), std::string::npos);
  EXPECT_NE(why("lat_staged nn f32 tile=32x32x64 warps=4x2").find("multiples of 16x16"), std::string::npos);
  EXPECT_NE(why("lat_staged nn f32 stages=33").find("stages 33 not in 2..32"), std::string::npos);
  EXPECT_NE(why("lat_staged nn f32 tile=128x128x64 warps=2x2 stages=2").find("accumulator"), std::string::npos);
  KernelSpec knob = default_spec("mma");
  knob.raster = Raster::AlongN;
  EXPECT_NE(invalid_reason(knob).find("raster"), std::string::npos);
  knob = default_spec("tiny");
  knob.swizzle = 2;
  EXPECT_NE(invalid_reason(knob).find("swizzle"), std::string::npos);
  knob = default_spec("mma");
  knob.family = "sm80";
  EXPECT_NE(invalid_reason(knob).find("unknown family 'sm80'"), std::string::npos);
}

TEST(KernelSpec, OwnFamiliesParseErrorsNameTheField) {
  auto err = [](const char* t) {
    try {
      parse_spec(t);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err("mma nn f32 cluster=1x1").find("unknown field 'cluster' for family mma"), std::string::npos);
  EXPECT_NE(err("tiny nn f32 stages=3").find("unknown field 'stages' for family tiny"), std::string::npos);
  EXPECT_NE(err("sm90_cutlass nn f32 warps=2x2").find("unknown field 'warps'"), std::string::npos);
  EXPECT_NE(err("mma nn f32 stages=auto").find("stages='auto'"), std::string::npos);
  EXPECT_NE(err("mma nn f32 warps=2").find("warps"), std::string::npos);
  EXPECT_NE(err("mma nn f32 | raster=along_m").find("unknown field 'raster'"), std::string::npos);
  EXPECT_NE(err("tile=64x64x32 mma nn f32").find("expected '<family>"), std::string::npos);
  EXPECT_NE(err("mmx nn f32")
                .find("unknown family 'mmx' (known: sm90_cutlass, mma, tiny, wgmma, wgmma_swapab, lat, lat_staged, "
                      "stream, stream_sweep, cublaslt)"),
            std::string::npos);
  EXPECT_NE(err("tiny nn").find("expected"), std::string::npos);
}

TEST(Codegen, OwnFamiliesIncludeTheirHeader) {
  auto mma = parse_spec("mma tn f16 tile=32x64x64 warps=1x2 stages=4 | splits=8");
  const auto src = generate_source(mma);
  EXPECT_EQ(src, generate_source(mma));
  EXPECT_NE(src.find("#include \"mma_gemm.cuh\""), std::string::npos);
  EXPECT_NE(src.find("CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, \"" + mma.compile_text() + "\")"), std::string::npos);
  // The configuration as template arguments: TN, fp16 accumulators, tile 32x64x64, warps 1x2, 4 stages.
  EXPECT_NE(src.find("using cudal2_kernel = cudal2_mma::Gemm<cudal2_mma::Config<true, true, 32, 64, 64, 1, 2, 4>>;"),
            std::string::npos)
      << src;
  auto one = mma;
  one.splits = 1;
  EXPECT_EQ(generate_source(one), src);  // runtime knobs do not change the source
  const auto tiny = generate_source(parse_spec("tiny nn f32 tile=16x32x32 warps=1x2 kwarps=4"));
  EXPECT_NE(tiny.find("#include \"tiny_gemm.cuh\""), std::string::npos);
  // NN, fp32 accumulators, tile 16x32x32, warps 1x2, kwarps 4.
  EXPECT_NE(tiny.find("cudal2_tiny::Gemm<cudal2_tiny::Config<false, false, 16, 32, 32, 1, 2, 4>>"), std::string::npos)
      << tiny;
}

// The family registry (codegen/families.cpp): every family answers for itself, consistently.
TEST(Families, RegistryIsConsistent) {
  std::set<std::string_view> names;
  std::vector<std::string> listed;
  for (const Family* f : all_families()) {
    SCOPED_TRACE(std::string(f->name));
    EXPECT_TRUE(names.insert(f->name).second) << "family registered twice";
    EXPECT_EQ(find_family(f->name), f);
    EXPECT_EQ(&family_of(default_spec(f->name)), f);
    ASSERT_TRUE(f->fields && f->default_spec && f->parse_field && f->compile_text && f->text && f->invalid_reason &&
                f->enumerate && f->shape_refusal && f->generate_source);
    const KernelSpec d = f->default_spec();
    EXPECT_EQ(d.family, f->name);
    EXPECT_EQ(f->invalid_reason(d), "");
    EXPECT_EQ(parse_spec(d.text()).text(), d.text());
    EXPECT_EQ(d.text().rfind(d.compile_text(), 0), 0u) << "the text starts with the compile text";
    EXPECT_EQ(f->fields().back(), "splits") << "every family has the split count, its last field";
    // Each key=value of the default text is one of its fields and parses on its own (after the
    // default's layout and accumulator: a family may take one layout only).
    std::istringstream words(d.text());
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos) continue;
      const auto& fields = f->fields();
      EXPECT_NE(std::find(fields.begin(), fields.end(), w.substr(0, eq)), fields.end()) << w;
      EXPECT_EQ(parse_spec(fmt::format("{} {} {} {}", f->name, to_string(d.layout), to_string(d.accum), w)).text(),
                d.text())
          << w;
    }
    if (f->listed) listed.emplace_back(f->name);
    EXPECT_EQ(f->runs_in_judge, f->name == "cublaslt");
  }
  EXPECT_EQ(known_families(), listed);
  EXPECT_EQ(find_family("sm80"), nullptr);
  KernelSpec odd = default_spec("mma");
  odd.family = "sm80";  // an unknown family prints and generates as sm90_cutlass (KernelSpec{}'s)
  EXPECT_EQ(&family_of(odd), find_family("sm90_cutlass"));
}

// Golden generated sources (tests/golden/codegen/*.cu.golden): one or two specs per family, byte
// for byte; the sources are the compile cache's key, so a change here recompiles every kernel of
// the family. When a change is intended, refresh them and review the diff before committing:
//   CUDAL2_UPDATE_GOLDEN=1 build/tests/cudal2_unit_tests --gtest_filter='Codegen.GoldenSources'
//   git diff tests/golden
TEST(Codegen, GoldenSources) {
  const auto dir = std::filesystem::path(__FILE__).parent_path().parent_path() / "golden" / "codegen";
  const char* env = std::getenv("CUDAL2_UPDATE_GOLDEN");
  const bool update = env && std::string(env) == "1";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"sm90_cutlass_nn_f32_default", "sm90_cutlass nn f32"},
      {"sm90_cutlass_tn_f16_streamk",
       "sm90_cutlass tn f16 tile=256x128x64 cluster=1x2 mainloop=cooperative epilogue=nosmem scheduler=streamk "
       "stages=4 | raster=along_n swizzle=2 decomposition=splitk splits=3"},
      {"mma_nn_f32_default", "mma nn f32"},
      {"mma_tn_f16_32x64x64", "mma tn f16 tile=32x64x64 warps=1x2 stages=4 | splits=8"},
      {"tiny_nn_f32_kwarps4", "tiny nn f32 tile=16x32x32 warps=1x2 kwarps=4"},
      {"tiny_tn_f16_32x32x64", "tiny tn f16 tile=32x32x64 warps=1x2 kwarps=2"},
      {"lat_tn_f32_32x32x64", "lat tn f32 tile=32x32x64 warps=1x1 kwarps=4"},
      {"lat_nn_f16_stages4", "lat nn f16 tile=16x16x64 warps=1x1 kwarps=8 stages=4 | splits=4"},
      {"wgmma_nn_f32_default", "wgmma nn f32"},
      {"wgmma_tn_f16_cluster2x1", "wgmma tn f16 tile=64x128x64 cluster=2x1 stages=5 | splits=auto"},
      {"wgmma_tn_f32_pingpong", "wgmma tn f32 tile=128x128x64 stages=6 mainloop=pingpong | raster=along_n swizzle=8"},
      {"wgmma_swapab_tn_f32_default", "wgmma_swapab tn f32"},
      {"wgmma_swapab_nn_f16_8x64", "wgmma_swapab nn f16 tile=8x64x64 stages=12 | splits=8"},
      {"wgmma_swapab_nn_f32_cluster2x1", "wgmma_swapab nn f32 tile=32x64x64 cluster=2x1 stages=16 | splits=1"},
      {"cublaslt_tn_f32", "cublaslt tn f32 algo=66 tile=20 stages=35 reduction=2 swizzle=1 cluster=2x1 | splits=4"},
  };
  const std::string refresh =
      "if the change is intended, refresh the goldens: CUDAL2_UPDATE_GOLDEN=1 cudal2_unit_tests "
      "--gtest_filter='Codegen.GoldenSources', then review `git diff tests/golden`";
  std::set<std::string> names;
  for (const auto& [name, text] : cases) {
    const auto path = dir / (name + ".cu.golden");
    names.insert(path.filename().string());
    const auto src = generate_source(parse_spec(text));
    if (update) {
      std::filesystem::create_directories(dir);
      std::ofstream(path, std::ios::binary) << src;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << "no golden source " << path << " for '" << text << "'; " << refresh;
    std::stringstream golden;
    golden << in.rdbuf();
    EXPECT_EQ(src, golden.str()) << "the generated source of '" << text << "' differs from " << path << "; " << refresh;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_TRUE(names.count(e.path().filename().string()))
        << e.path() << " is no golden of this test: remove it or add its spec to the test";
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

// Specs that differ only in runtime knobs give one source several times in one batch: it is
// built once and every copy gets the same artifact (two threads building one source in one cache
// directory broke each other's build on the device machine).
TEST_F(JitTest, DuplicateSourcesInOneBatchBuildOnce) {
  opt_.jobs = 4;
  Compiler c(opt_);
  const std::string src = "__global__ void k(int* p) { p[threadIdx.x] = 1; }\n";
  const auto r = c.compile_all({src, src, src, src});
  ASSERT_EQ(r.size(), 4u);
  int built = 0;
  for (const auto& x : r) {
    EXPECT_EQ(x.status, "ok") << x.log;
    EXPECT_EQ(x.artifact, r[0].artifact);
    built += !x.cached;
  }
  EXPECT_EQ(built, 1);
}

// mma's and tiny's headers take their configuration as template arguments (no CUDAL2_* macros):
// each compiles on its own, and both in one source.
// Every kernel header configured by templates compiles without a configuration (nothing
// configured by macros); sm90_cutlass_gemm.cuh is compiled by GeneratedKernelsCompileLoadAndCache.
TEST_F(JitTest, OwnKernelHeadersCompileOnTheirOwn) {
  Compiler c(opt_);
  const std::vector<std::string> headers{"mma_gemm.cuh\"\n#include \"tiny_gemm.cuh", "wgmma_gemm.cuh",
                                         "wgmma_swapab.cuh", "cublaslt_gemm.h", "stream_rows_gemm.cuh"};
  std::vector<std::string> sources;
  for (const auto& h : headers) sources.push_back("#include \"" + h + "\"\n");
  const auto rs = c.compile_all(sources);
  for (size_t i = 0; i < rs.size(); ++i) EXPECT_EQ(rs[i].status, "ok") << headers[i] << "\n" << rs[i].log;
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
  EXPECT_THROW(Artifact((dir_ / "missing.so").string()), MethodUnsupported);
}

// One mma and one tiny spec through the JIT (a few seconds each: no CUTLASS), loaded back; their
// ABI answers without a GPU: shapes of any size, the knobs they refuse, split-K workspace sizes.
TEST_F(JitTest, OwnFamiliesCompileAndAnswerTheAbi) {
  const auto mma = parse_spec("mma nn f32 tile=64x64x32 warps=2x2 stages=3 | splits=4");
  const auto tiny = parse_spec("tiny tn f16 tile=32x32x64 warps=1x2 kwarps=2");
  Compiler c(opt_);
  const auto rs = c.compile_all({generate_source(mma), generate_source(tiny)});
  for (const auto& r : rs) ASSERT_EQ(r.status, "ok") << r.log;
  Artifact am(rs[0].artifact), at(rs[1].artifact);
  EXPECT_EQ(am.describe(), mma.compile_text());
  EXPECT_EQ(at.describe(), tiny.compile_text());
  cudal2_gemm_args a{};
  a.m = 100, a.n = 7, a.k = 1000, a.swizzle = 1, a.splits = 4;
  EXPECT_EQ(am.can_implement(a), "");
  const auto g = cudal2_plan::grid(100, 7, 1000, 64, 64, 32, 4);
  EXPECT_EQ(am.workspace_size(a), cudal2_plan::workspace_bytes(g, 64, 64));
  EXPECT_EQ(am.workspace_size(a), 256u + 2u * 4u * 64u * 64u * 4u);
  a.splits = 1;
  EXPECT_EQ(am.workspace_size(a), 0u);
  a.splits = 65;
  EXPECT_NE(am.can_implement(a), "");
  a.splits = 4;
  EXPECT_NE(at.can_implement(a).find("splits=1"), std::string::npos);
  a.splits = 1;
  EXPECT_EQ(at.can_implement(a), "");
  EXPECT_EQ(at.workspace_size(a), 0u);
  a.raster = 1;
  EXPECT_NE(am.can_implement(a).find("raster"), std::string::npos);
  a.raster = 0, a.m = 0;
  EXPECT_NE(at.can_implement(a).find("sizes"), std::string::npos);
}

}  // namespace
}  // namespace cudal2
