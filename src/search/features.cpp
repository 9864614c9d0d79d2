#include "search/features.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/roofline.hpp"

namespace cudal2::search {

namespace {

double log2d(double x) { return std::log2(std::max(x, 1.0)); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// cublasLtMatmulTile_t's sizes by id (cublasLt.h, CUDA 13: CUBLASLT_MATMUL_TILE_<M>x<N> = id).
constexpr int kLtTiles[][2] = {
    {0, 0},     {8, 8},     {8, 16},     {16, 8},    {8, 32},     {16, 16},   {32, 8},    {8, 64},    {16, 32},
    {32, 16},   {64, 8},    {32, 32},    {32, 64},   {64, 32},    {32, 128},  {64, 64},   {128, 32},  {64, 128},
    {128, 64},  {64, 256},  {128, 128},  {256, 64},  {64, 512},   {128, 256}, {256, 128}, {512, 64},  {64, 96},
    {96, 64},   {96, 128},  {128, 160},  {160, 128}, {192, 128},  {128, 192}, {128, 96},  {32, 256},  {256, 32},
    {8, 128},   {8, 192},   {8, 256},    {8, 320},   {8, 384},    {8, 448},   {8, 512},   {8, 576},   {8, 640},
    {8, 704},   {8, 768},   {16, 64},    {16, 128},  {16, 192},   {16, 256},  {16, 320},  {16, 384},  {16, 448},
    {16, 512},  {16, 576},  {16, 640},   {16, 704},  {16, 768},   {24, 64},   {24, 128},  {24, 192},  {24, 256},
    {24, 320},  {24, 384},  {24, 448},   {24, 512},  {24, 576},   {24, 640},  {24, 704},  {24, 768},  {32, 192},
    {32, 320},  {32, 384},  {32, 448},   {32, 512},  {32, 576},   {32, 640},  {32, 704},  {32, 768},  {40, 64},
    {40, 128},  {40, 192},  {40, 256},   {40, 320},  {40, 384},   {40, 448},  {40, 512},  {40, 576},  {40, 640},
    {40, 704},  {40, 768},  {48, 64},    {48, 128},  {48, 192},   {48, 256},  {48, 320},  {48, 384},  {48, 448},
    {48, 512},  {48, 576},  {48, 640},   {48, 704},  {48, 768},   {56, 64},   {56, 128},  {56, 192},  {56, 256},
    {56, 320},  {56, 384},  {56, 448},   {56, 512},  {56, 576},   {56, 640},  {56, 704},  {56, 768},  {64, 192},
    {64, 320},  {64, 384},  {64, 448},   {64, 576},  {64, 640},   {64, 704},  {64, 768},  {72, 64},   {72, 128},
    {72, 192},  {72, 256},  {72, 320},   {72, 384},  {72, 448},   {72, 512},  {72, 576},  {72, 640},  {80, 64},
    {80, 128},  {80, 192},  {80, 256},   {80, 320},  {80, 384},   {80, 448},  {80, 512},  {80, 576},  {88, 64},
    {88, 128},  {88, 192},  {88, 256},   {88, 320},  {88, 384},   {88, 448},  {88, 512},  {96, 192},  {96, 256},
    {96, 320},  {96, 384},  {96, 448},   {96, 512},  {104, 64},   {104, 128}, {104, 192}, {104, 256}, {104, 320},
    {104, 384}, {104, 448}, {112, 64},   {112, 128}, {112, 192},  {112, 256}, {112, 320}, {112, 384}, {120, 64},
    {120, 128}, {120, 192}, {120, 256},  {120, 320}, {120, 384},  {128, 320}, {128, 384}, {136, 64},  {136, 128},
    {136, 192}, {136, 256}, {136, 320},  {144, 64},  {144, 128},  {144, 192}, {144, 256}, {144, 320}, {152, 64},
    {152, 128}, {152, 192}, {152, 256},  {152, 320}, {160, 64},   {160, 192}, {160, 256}, {168, 64},  {168, 128},
    {168, 192}, {168, 256}, {176, 64},   {176, 128}, {176, 192},  {176, 256}, {184, 64},  {184, 128}, {184, 192},
    {184, 256}, {192, 64},  {192, 192},  {192, 256}, {200, 64},   {200, 128}, {200, 192}, {208, 64},  {208, 128},
    {208, 192}, {216, 64},  {216, 128},  {216, 192}, {224, 64},   {224, 128}, {224, 192}, {232, 64},  {232, 128},
    {232, 192}, {240, 64},  {240, 128},  {240, 192}, {248, 64},   {248, 128}, {248, 192}, {256, 192}, {264, 64},
    {264, 128}, {272, 64},  {272, 128},  {280, 64},  {280, 128},  {288, 64},  {288, 128}, {296, 64},  {296, 128},
    {304, 64},  {304, 128}, {312, 64},   {312, 128}, {320, 64},   {320, 128}, {328, 64},  {328, 128}, {336, 64},
    {336, 128}, {344, 64},  {344, 128},  {352, 64},  {352, 128},  {360, 64},  {360, 128}, {368, 64},  {368, 128},
    {376, 64},  {376, 128}, {384, 64},   {384, 128}, {392, 64},   {400, 64},  {408, 64},  {416, 64},  {424, 64},
    {432, 64},  {440, 64},  {448, 64},   {456, 64},  {464, 64},   {472, 64},  {480, 64},  {488, 64},  {496, 64},
    {504, 64},  {520, 64},  {528, 64},   {536, 64},  {544, 64},   {552, 64},  {560, 64},  {568, 64},  {576, 64},
    {584, 64},  {592, 64},  {600, 64},   {608, 64},  {616, 64},   {624, 64},  {632, 64},  {640, 64},  {648, 64},
    {656, 64},  {664, 64},  {672, 64},   {680, 64},  {688, 64},   {696, 64},  {704, 64},  {712, 64},  {720, 64},
    {728, 64},  {736, 64},  {744, 64},   {752, 64},  {760, 64},   {768, 64},  {64, 16},   {64, 24},   {64, 40},
    {64, 48},   {64, 56},   {64, 72},    {64, 80},   {64, 88},    {64, 104},  {64, 112},  {64, 120},  {64, 136},
    {64, 144},  {64, 152},  {64, 160},   {64, 168},  {64, 176},   {64, 184},  {64, 200},  {64, 208},  {64, 216},
    {64, 224},  {64, 232},  {64, 240},   {64, 248},  {64, 264},   {64, 272},  {64, 280},  {64, 288},  {64, 296},
    {64, 304},  {64, 312},  {64, 328},   {64, 336},  {64, 344},   {64, 352},  {64, 360},  {64, 368},  {64, 376},
    {64, 392},  {64, 400},  {64, 408},   {64, 416},  {64, 424},   {64, 432},  {64, 440},  {64, 456},  {64, 464},
    {64, 472},  {64, 480},  {64, 488},   {64, 496},  {64, 504},   {64, 520},  {64, 528},  {64, 536},  {64, 544},
    {64, 552},  {64, 560},  {64, 568},   {64, 584},  {64, 592},   {64, 600},  {64, 608},  {64, 616},  {64, 624},
    {64, 632},  {64, 648},  {64, 656},   {64, 664},  {64, 672},   {64, 680},  {64, 688},  {64, 696},  {64, 712},
    {64, 720},  {64, 728},  {64, 736},   {64, 744},  {64, 752},   {64, 760},  {128, 8},   {128, 16},  {128, 24},
    {128, 40},  {128, 48},  {128, 56},   {128, 72},  {128, 80},   {128, 88},  {128, 104}, {128, 112}, {128, 120},
    {128, 136}, {128, 144}, {128, 152},  {128, 168}, {128, 176},  {128, 184}, {128, 200}, {128, 208}, {128, 216},
    {128, 224}, {128, 232}, {128, 240},  {128, 248}, {128, 264},  {128, 272}, {128, 280}, {128, 288}, {128, 296},
    {128, 304}, {128, 312}, {128, 328},  {128, 336}, {128, 344},  {128, 352}, {128, 360}, {128, 368}, {128, 376},
    {128, 392}, {128, 400}, {128, 408},  {128, 416}, {128, 424},  {128, 432}, {128, 440}, {128, 448}, {128, 456},
    {128, 464}, {128, 472}, {128, 480},  {128, 488}, {128, 496},  {128, 504}, {128, 512}, {192, 8},   {192, 16},
    {192, 24},  {192, 32},  {192, 40},   {192, 48},  {192, 56},   {192, 72},  {192, 80},  {192, 88},  {192, 96},
    {192, 104}, {192, 112}, {192, 120},  {192, 136}, {192, 144},  {192, 152}, {192, 160}, {192, 168}, {192, 176},
    {192, 184}, {192, 200}, {192, 208},  {192, 216}, {192, 224},  {192, 232}, {192, 240}, {192, 248}, {192, 264},
    {192, 272}, {192, 280}, {192, 288},  {192, 296}, {192, 304},  {192, 312}, {192, 320}, {192, 328}, {192, 336},
    {256, 8},   {256, 16},  {256, 24},   {256, 40},  {256, 48},   {256, 56},  {256, 72},  {256, 80},  {256, 88},
    {256, 96},  {256, 104}, {256, 112},  {256, 120}, {256, 136},  {256, 144}, {256, 152}, {256, 160}, {256, 168},
    {256, 176}, {256, 184}, {256, 200},  {256, 208}, {256, 216},  {256, 224}, {256, 232}, {256, 240}, {256, 248},
    {256, 256}, {320, 8},   {320, 16},   {320, 24},  {320, 32},   {320, 40},  {320, 48},  {320, 56},  {320, 72},
    {320, 80},  {320, 88},  {320, 96},   {320, 104}, {320, 112},  {320, 120}, {320, 136}, {320, 144}, {320, 152},
    {320, 160}, {320, 168}, {320, 176},  {320, 184}, {320, 192},  {320, 200}, {384, 8},   {384, 16},  {384, 24},
    {384, 32},  {384, 40},  {384, 48},   {384, 56},  {384, 72},   {384, 80},  {384, 88},  {384, 96},  {384, 104},
    {384, 112}, {384, 120}, {384, 136},  {384, 144}, {384, 152},  {384, 160}, {384, 168}, {448, 8},   {448, 16},
    {448, 24},  {448, 32},  {448, 40},   {448, 48},  {448, 56},   {448, 72},  {448, 80},  {448, 88},  {448, 96},
    {448, 104}, {448, 112}, {448, 120},  {448, 128}, {448, 136},  {448, 144}, {512, 8},   {512, 16},  {512, 24},
    {512, 32},  {512, 40},  {512, 48},   {512, 56},  {512, 72},   {512, 80},  {512, 88},  {512, 96},  {512, 104},
    {512, 112}, {512, 120}, {512, 128},  {576, 8},   {576, 16},   {576, 24},  {576, 32},  {576, 40},  {576, 48},
    {576, 56},  {576, 72},  {576, 80},   {576, 88},  {576, 96},   {576, 104}, {576, 112}, {640, 8},   {640, 16},
    {640, 24},  {640, 32},  {640, 40},   {640, 48},  {640, 56},   {640, 72},  {640, 80},  {640, 88},  {640, 96},
    {704, 8},   {704, 16},  {704, 24},   {704, 32},  {704, 40},   {704, 48},  {704, 56},  {704, 72},  {704, 80},
    {704, 88},  {768, 8},   {768, 16},   {768, 24},  {768, 32},   {768, 40},  {768, 48},  {768, 56},  {768, 72},
    {768, 80},  {256, 512}, {256, 1024}, {512, 512}, {512, 1024},
};
// cublasLtMatmulStages_t's K step by id (CUBLASLT_MATMUL_STAGES_<K>x<stages>; 29, 30: none).
constexpr int kLtStagesK[] = {0,   16,  16,  16,  16,  16, 16, 32, 32, 32, 32, 32, 32, 64, 64, 64, 64,  64,  64, 128,
                              128, 128, 128, 128, 128, 32, 8,  16, 8,  0,  0,  8,  8,  16, 32, 64, 128, 256, 768};
static_assert(std::size(kLtStagesK) == 39 && kLtStagesK[35] == 64 && kLtStagesK[25] == 32);
static_assert(kLtTiles[23][0] == 128 && kLtTiles[23][1] == 256 && kLtTiles[576][0] == 512);

}  // namespace

CtaTile cta_tile(const KernelSpec& s) {
  if (s.family != "cublaslt") return {s.tile_m, s.tile_n, s.tile_k, s.cluster_m, s.cluster_n};
  CtaTile t;
  if (s.lt_tile > 0 && s.lt_tile < static_cast<int>(std::size(kLtTiles)))
    t.m = kLtTiles[s.lt_tile][1], t.n = kLtTiles[s.lt_tile][0];
  if (s.lt_stages > 0 && s.lt_stages < static_cast<int>(std::size(kLtStagesK))) t.k = kLtStagesK[s.lt_stages];
  t.cluster_m = s.cluster_n, t.cluster_n = s.cluster_m;
  return t;
}

std::vector<double> shape_features(const Problem& p, const FeatureOptions& o) {
  const Shape& s = p.shape;
  const double ai = flops(s) / min_bytes(s);  // flop per byte at the ideal traffic
  const bool a16 = s.m % 8 == 0 && s.n % 8 == 0 && s.k % 8 == 0;
  const bool a128 = s.n % 64 == 0 && s.k % 64 == 0;
  return {1.0,
          log2d(double(s.m)) / 16,
          log2d(double(s.n)) / 16,
          log2d(double(s.k)) / 16,
          log2d(ai) / 12,
          min_bytes(s) <= o.l2_bytes ? 1.0 : 0.0,
          a16 ? 1.0 : 0.0,
          a128 ? 1.0 : 0.0,
          p.layout == Layout::TN ? 1.0 : 0.0,
          p.accum == Accum::F16 ? 1.0 : 0.0};
}

std::vector<double> cross_features(const Problem& p) {
  const Shape& s = p.shape;
  const bool a16 = s.m % 8 == 0 && s.n % 8 == 0 && s.k % 8 == 0;
  return {1.0,
          log2d(double(s.m)) / 16,
          log2d(double(s.n)) / 16,
          log2d(double(s.k)) / 16,
          a16 ? 1.0 : 0.0,
          p.layout == Layout::TN ? 1.0 : 0.0};
}

Waves waves_of(const Shape& sh, const KernelSpec& s, int sm_count) {
  const CtaTile t = cta_tile(s);
  const int64_t tm = std::max<int64_t>(1, t.m), tn = std::max<int64_t>(1, t.n);
  const int64_t splits = std::max(1, s.splits);
  const int64_t ctas = ceil_div(sh.m, tm) * ceil_div(sh.n, tn) * splits;
  return {ctas, ceil_div(ctas, std::max(1, sm_count))};
}

std::vector<double> fit_features(const Problem& p, const KernelSpec& s, const FeatureOptions& o) {
  const Shape& sh = p.shape;
  const CtaTile t = cta_tile(s);
  const int64_t tm = std::max<int64_t>(1, t.m), tn = std::max<int64_t>(1, t.n), tk = std::max<int64_t>(1, t.k);
  const int64_t splits = std::max(1, s.splits);
  const int64_t tiles_m = ceil_div(sh.m, tm), tiles_n = ceil_div(sh.n, tn);
  const auto [ctas, waves] = waves_of(sh, s, o.sm_count);
  const double sms = std::max(1, o.sm_count);
  const int64_t k_per = ceil_div(sh.k, splits);
  const int64_t k_iters = ceil_div(k_per, tk);
  const int64_t cm = std::max<int64_t>(1, t.cluster_m), cn = std::max<int64_t>(1, t.cluster_n);
  const double cluster_pad =
      double(tiles_m) / double(ceil_div(tiles_m, cm) * cm) * double(tiles_n) / double(ceil_div(tiles_n, cn) * cn);
  // Partial sums written and read back once per extra split, relative to the ideal traffic.
  const double reduction =
      splits > 1 ? std::log2(1.0 + double(splits) * double(sh.m) * double(sh.n) * 4.0 / min_bytes(sh)) / 4 : 0.0;
  return {std::log(double(ctas) / (double(waves) * sms)),
          std::log(std::min(1.0, double(ctas) / sms)),
          log2d(double(waves)) / 8,
          std::log(double(sh.m) / double(tiles_m * tm)),
          std::log(double(sh.n) / double(tiles_n * tn)),
          std::log(double(k_per) / double(k_iters * tk)),
          log2d(double(k_iters)) / 8,
          log2d(double(splits)) / 5,
          std::log(cluster_pad),
          reduction,
          log2d(double(tm * tn)) / 16};
}

std::vector<std::string> spec_tokens(const KernelSpec& s) {
  std::vector<std::string> out;
  const std::string& f = s.family;
  out.push_back(f);
  const std::string text = s.text();
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    if (word.find('=') != std::string::npos) out.push_back(f + "." + word);
    i = j + 1;
  }
  const CtaTile t = cta_tile(s);
  out.push_back(f + ".tile_m=" + std::to_string(t.m));
  out.push_back(f + ".tile_n=" + std::to_string(t.n));
  out.push_back(f + ".tile_k=" + std::to_string(t.k));
  return out;
}

int FeatureMap::intern(const std::string& token) {
  auto [it, added] = index_.emplace(token, static_cast<int>(tokens_.size()));
  if (added) tokens_.push_back(token);
  return it->second;
}

std::vector<int> FeatureMap::token_ids(const KernelSpec& s) {
  std::vector<int> ids;
  for (const auto& t : spec_tokens(s)) ids.push_back(intern(t));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

SparseVec FeatureMap::features(const Problem& p, const KernelSpec& s, bool top1) {
  const auto ids = token_ids(s);
  return features(shape_features(p, opt_), cross_features(p), fit_features(p, s, opt_), ids, top1);
}

SparseVec FeatureMap::features(const std::vector<double>& shape, const std::vector<double>& cross,
                               const std::vector<double>& fit, const std::vector<int>& token_ids, bool top1) const {
  SparseVec x;
  x.reserve(shape.size() + (fit.size() + token_ids.size() + 1) * cross.size());
  for (int i = 0; i < kShapeFeatures; ++i)
    if (shape[i] != 0) x.emplace_back(i, shape[i]);
  for (int j = 0; j < kFitFeatures; ++j)
    if (fit[j] != 0)
      for (int c = 0; c < kCrossFeatures; ++c)
        if (cross[c] != 0) x.emplace_back(fit_offset() + j * kCrossFeatures + c, fit[j] * cross[c]);
  if (top1)
    for (int c = 0; c < kCrossFeatures; ++c)
      if (cross[c] != 0) x.emplace_back(rank_offset() + c, cross[c]);
  for (int t : token_ids)
    for (int c = 0; c < kCrossFeatures; ++c)
      if (cross[c] != 0) x.emplace_back(token_offset() + t * kCrossFeatures + c, cross[c]);
  return x;
}

}  // namespace cudal2::search
