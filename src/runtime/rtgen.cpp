// cudal2_rtgen OUT_DIR TABLE.json [TABLE.json ...]: the build-time step of libcudal2_runtime, which
// carries one table per GPU and picks one by the device it runs on (runtime/select.hpp). Tables of
// the same GPU (name and compute capability) are merged into one, the first listed winning a shape
// both have: a table tuned for a user's model (`cudal2 tune --model`) goes in front of the grid's.
// Writes
//   OUT_DIR/t<j>_k<i>.cu  one per kernel of the j-th file's "kernels" list, except `cublaslt` ones: the
//                         codegen source of that spec, with its C ABI renamed to cudal2_rt_t<j>_k<i>_*
//                         by macros in front (any family codegen knows: nothing here is per family).
//                         A kernel text an earlier file (command-line order) lists too gets no file of
//                         its own: its table calls the earlier file's functions (one compile per kernel
//                         for the whole library: GPUs tuned alike share many).
//   OUT_DIR/table.cpp     per table its GPU, compute capability, kernel list and sorted entries as
//                         constant arrays (table.hpp); a `cublaslt` kernel is its algorithm
//                         configuration there (LtConfig), no code
// Files whose content would not change are left alone, so re-running it rebuilds nothing; a
// t<j>_k<i>.cu the tables no longer ask for is removed. src/runtime/CMakeLists.txt names the same
// files (the kernels whose text does not start with "cublaslt").
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/codegen.hpp"
#include "codegen/family_cublaslt.hpp"
#include "codegen/spec.hpp"
#include "core/problem.hpp"

namespace {

const char* kAbi[] = {"abi_version", "describe", "can_implement", "workspace_size", "run"};

void write_if_changed(const std::filesystem::path& p, const std::string& text) {
  {
    std::ifstream in(p, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      if (ss.str() == text) return;
    }
  }
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + p.string());
}

std::string cstr(const std::string& s) { return nlohmann::json(s).dump(); }  // JSON escapes are valid C here

// A float literal: "2.524f", "120.0f" (a bare "120f" is not C++).
std::string flit(double x) {
  std::string s = fmt::format("{}", x);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s + "f";
}

// "9.0" -> {9, 0}. Tables without "cc" were all measured on Hopper (sm_90), the only target the
// kernels are compiled for.
std::pair<int, int> table_cc(const nlohmann::json& t) {
  const std::string cc = t.value("cc", "9.0");
  const auto dot = cc.find('.');
  if (dot == std::string::npos) throw std::runtime_error(fmt::format("table cc '{}' is not MAJOR.MINOR", cc));
  return {std::stoi(cc.substr(0, dot)), std::stoi(cc.substr(dot + 1))};
}

int layout_id(const std::string& s) { return cudal2::parse_layout(s) == cudal2::Layout::NN ? 0 : 1; }
int accum_id(const std::string& s) { return cudal2::parse_accum(s) == cudal2::Accum::F32 ? 0 : 1; }

struct Generated {
  std::string decls, arrays, table_row;
  size_t kernels = 0, compiled = 0, entries = 0;
};

// One GPU's table, merged from the files that describe it: kernels concatenated, each entry's
// kernel index shifted by its file's offset.
struct Group {
  std::string gpu, sources;
  std::pair<int, int> cc;
  nlohmann::json kernels = nlohmann::json::array();
  std::vector<std::pair<int, size_t>> origin;  // per kernel: (file's position on the command line, index there)
  nlohmann::json entries = nlohmann::json::array();
};

nlohmann::json read_table(const std::filesystem::path& table_path) {
  std::ifstream in(table_path);
  if (!in) throw std::runtime_error(fmt::format("cannot read table '{}'", table_path.string()));
  auto t = nlohmann::json::parse(in);
  if (t.value("format", "") != "cudal2-table" || t.value("version", 0) != 1)
    throw std::runtime_error(
        fmt::format("'{}' is not a cudal2 table (format cudal2-table, version 1)", table_path.string()));
  return t;
}

// Adds a table file to its GPU's group (made if new); a shape an earlier file has is skipped.
void add_to_group(std::vector<Group>& groups, const std::filesystem::path& table_path, int file) {
  const auto t = read_table(table_path);
  const std::string gpu = t.value("gpu", "");
  const auto cc = table_cc(t);
  auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.gpu == gpu && x.cc == cc; });
  if (g == groups.end()) {
    Group fresh;
    fresh.gpu = gpu, fresh.cc = cc;
    groups.push_back(std::move(fresh));
    g = groups.end() - 1;
  }
  g->sources += (g->sources.empty() ? "" : "+") + table_path.filename().string();
  const int offset = static_cast<int>(g->kernels.size());
  for (size_t i = 0; i < t.at("kernels").size(); ++i) {
    g->kernels.push_back(t.at("kernels")[i]);
    g->origin.emplace_back(file, i);
  }
  std::set<std::tuple<std::string, std::string, int64_t, int64_t, int64_t>> have;
  for (const auto& e : g->entries)
    have.insert(
        {e.at("accum"), e.at("layout"), e.at("m").get<int64_t>(), e.at("n").get<int64_t>(), e.at("k").get<int64_t>()});
  std::set<std::tuple<std::string, std::string, int64_t, int64_t, int64_t>> mine;
  for (auto e : t.at("entries")) {
    const std::tuple<std::string, std::string, int64_t, int64_t, int64_t> key{
        e.at("accum"), e.at("layout"), e.at("m").get<int64_t>(), e.at("n").get<int64_t>(), e.at("k").get<int64_t>()};
    if (!mine.insert(key).second)
      throw std::runtime_error(fmt::format("the table '{}' has a shape twice", table_path.string()));
    if (have.count(key)) continue;
    auto& run = e.at("run");
    const int kernel = run.at("kernel");
    if (kernel >= static_cast<int>(t.at("kernels").size()))
      throw std::runtime_error(fmt::format("entry {}x{}x{}: kernel {} out of range", e.at("m").get<int64_t>(),
                                           e.at("n").get<int64_t>(), e.at("k").get<int64_t>(), kernel));
    if (kernel >= 0) run["kernel"] = kernel + offset;
    g->entries.push_back(std::move(e));
  }
}

// The (file, index) that owns each compiled kernel's text: its first listing in command-line order,
// the order in which src/runtime/CMakeLists.txt names the generated files.
using Owners = std::map<std::string, std::pair<int, size_t>>;

// Table j of the library: its kernel sources (written into out, names added to written) and its
// part of table.cpp.
Generated generate_table(const Group& t, int j, const std::filesystem::path& out, std::set<std::string>& written,
                         const Owners& owners) {
  Generated g;
  std::string kernels;
  const auto& ks = t.kernels;
  g.kernels = ks.size();
  for (size_t i = 0; i < ks.size(); ++i) {
    const auto spec = cudal2::parse_spec(ks[i].get<std::string>());
    if (const auto why = cudal2::invalid_reason(spec); !why.empty())
      throw std::runtime_error(fmt::format("kernel {} '{}': {}", i, spec.compile_text(), why));
    const int layout = spec.layout == cudal2::Layout::NN ? 0 : 1, accum = spec.accum == cudal2::Accum::F32 ? 0 : 1;
    if (spec.family == cudal2::kCublasLtFamily) {
      // Data, not code: runtime.cpp configures this algorithm and calls cublasLtMatmul.
      const int cluster = cudal2::cublaslt_cluster_id(spec.cluster_m, spec.cluster_n);
      if (cluster < 0)
        throw std::runtime_error(fmt::format("kernel {} '{}': cuBLASLt has no cluster shape {}x{}", i,
                                             spec.compile_text(), spec.cluster_m, spec.cluster_n));
      kernels += fmt::format(
          "    {{{}, {}, {}, {}, 0, 0, 0, true, true, {{{}, {}, {}, {}, {}, {}, {}, {}}}, nullptr, nullptr, "
          "nullptr}},\n",
          cstr(spec.compile_text()), cstr(spec.family), layout, accum, spec.lt_algo, spec.lt_tile, spec.lt_stages,
          spec.lt_reduction, spec.lt_swizzle, spec.lt_custom, spec.lt_inner, cluster);
      continue;
    }
    ++g.compiled;
    // Named by the file the kernel comes from, so CMake knows the names without merging tables;
    // written by the kernel's owner only (the other listings call the owner's functions).
    const auto [f, fi] = owners.at(ks[i].get<std::string>());
    const std::string prefix = fmt::format("cudal2_rt_t{}_k{}", f, fi), file = fmt::format("t{}_k{}.cu", f, fi);
    written.insert(file);
    if (std::make_pair(f, fi) == t.origin[i]) {
      std::string src = fmt::format("// Generated by cudal2_rtgen: kernel {} of table file {}. Do not edit.\n", fi, f);
      for (const char* abi : kAbi) src += fmt::format("#define cudal2_{} {}_{}\n", abi, prefix, abi);
      src += cudal2::generate_source(spec);
      write_if_changed(out / file, src);
    }
    g.decls += fmt::format(
        "int {0}_can_implement(const cudal2_gemm_args*, char*, size_t);\n"
        "size_t {0}_workspace_size(const cudal2_gemm_args*);\n"
        "int {0}_run(const cudal2_gemm_args*, void*, char*, size_t);\n",
        prefix);
    // Families without host state (no CUTLASS adapter, no cached plan) run without a lock.
    kernels += fmt::format(
        "    {{{}, {}, {}, {}, {}, {}, {}, {}, false, {{}}, &{}_can_implement, &{}_workspace_size, &{}_run}},\n",
        cstr(spec.compile_text()), cstr(spec.family), layout, accum, spec.tile_m, spec.tile_n, spec.tile_k,
        spec.family == "mma" || spec.family == "tiny" || spec.family == "lat" || spec.family == "lat_staged" ? "true"
                                                                                                             : "false",
        prefix, prefix, prefix);
  }
  struct Row {
    std::tuple<int, int, int64_t, int64_t, int64_t> key;
    std::string text;
  };
  std::vector<Row> rows;
  for (const auto& e : t.entries) {
    const std::string layout = e.at("layout"), accum = e.at("accum");
    const auto& run = e.at("run");
    const int kernel = run.at("kernel");
    int raster = 0, swizzle = 1, decomposition = 0, splits = 1;
    std::string spec = "cublaslt";
    if (kernel >= 0) {
      const auto s = cudal2::parse_spec(run.at("spec").get<std::string>());
      if (s.compile_text() != ks[kernel].get<std::string>())
        throw std::runtime_error(fmt::format("entry spec '{}' is not kernel {}", s.text(), kernel));
      raster = static_cast<int>(s.raster), swizzle = s.swizzle, decomposition = static_cast<int>(s.decomposition);
      splits = s.splits;
      spec = s.text();
    }
    double fallback = 0;
    if (const auto& b = e.at("baselines"); b.is_object()) {
      for (const auto& name : {"cublaslt-heuristic-" + layout, "cublas-" + layout})
        if (b.contains(name)) {
          fallback = b[name].at("us").get<double>();
          break;
        }
    }
    const double us = run.at("us").is_number() ? run.at("us").get<double>() : 0.0;
    Row r;
    r.key = {accum_id(accum), layout_id(layout), e.at("m").get<int64_t>(), e.at("n").get<int64_t>(),
             e.at("k").get<int64_t>()};
    r.text = fmt::format("    {{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}},\n", std::get<0>(r.key),
                         std::get<1>(r.key), std::get<2>(r.key), std::get<3>(r.key), std::get<4>(r.key), kernel, raster,
                         swizzle, decomposition, splits, cstr(spec), flit(us), flit(fallback));
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.key < b.key; });
  std::string entries;
  for (const auto& r : rows) entries += r.text;
  g.entries = rows.size();
  g.arrays = fmt::format(R"(// Table {j}: {src}
const KernelInfo kKernels{j}[] = {{
{kernels}    {{nullptr, nullptr, 0, 0, 0, 0, 0, true, false, {{}}, nullptr, nullptr, nullptr}}}};
const Entry kEntries{j}[] = {{
{entries}    {{0, 0, 0, 0, 0, -1, 0, 1, 0, 1, nullptr, 0.0f, 0.0f}}}};

)",
                         fmt::arg("j", j), fmt::arg("src", t.sources), fmt::arg("kernels", kernels),
                         fmt::arg("entries", entries));
  g.table_row = fmt::format("    {{{}, {}, {}, {}, kKernels{}, {}, kEntries{}, {}}},\n", cstr(t.gpu), cstr(t.sources),
                            t.cc.first, t.cc.second, j, ks.size(), j, rows.size());
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cudal2_rtgen OUT_DIR TABLE.json [TABLE.json ...]\n");
    return 2;
  }
  try {
    const std::filesystem::path out(argv[1]);
    std::filesystem::create_directories(out);
    std::set<std::string> written;
    std::string decls, arrays, rows, sources;
    size_t kernels = 0, compiled = 0, entries = 0;
    std::set<std::string> gpus;
    std::vector<Group> groups;
    for (int i = 2; i < argc; ++i) add_to_group(groups, argv[i], i - 2);
    Owners owners;
    for (const auto& g : groups)
      for (size_t i = 0; i < g.kernels.size(); ++i) {
        const std::string text = g.kernels[i].get<std::string>();
        if (text.starts_with("cublaslt")) continue;
        auto [it, added] = owners.emplace(text, g.origin[i]);
        if (!added && g.origin[i] < it->second) it->second = g.origin[i];
      }
    for (size_t j = 0; j < groups.size(); ++j) {
      const auto g = generate_table(groups[j], static_cast<int>(j), out, written, owners);
      decls += g.decls, arrays += g.arrays, rows += g.table_row;
      kernels += g.kernels, compiled += g.compiled, entries += g.entries;
      sources += (sources.empty() ? "" : ", ") + groups[j].sources;
    }
    // A t<j>_k<i>.cu (or a kernel_<i>.cu of the one-table layout) that these tables do not ask for:
    // not built, so removed.
    for (const auto& f : std::filesystem::directory_iterator(out)) {
      const auto name = f.path().filename().string();
      if ((name.starts_with("kernel_") || name.starts_with("t")) && name.ends_with(".cu") && !written.count(name))
        std::filesystem::remove(f.path());
    }
    const std::string table = fmt::format(
        R"(// Generated by cudal2_rtgen from {sources}. Do not edit.
#include "runtime/table.hpp"

extern "C" {{
{decls}}}

namespace cudal2::rt {{

{arrays}const Table kTables[] = {{
{rows}    {{nullptr, nullptr, 0, 0, nullptr, 0, nullptr, 0}}}};
const int kNumTables = {nt};

}}  // namespace cudal2::rt
)",
        fmt::arg("sources", sources), fmt::arg("decls", decls), fmt::arg("arrays", arrays), fmt::arg("rows", rows),
        fmt::arg("nt", groups.size()));
    write_if_changed(out / "table.cpp", table);
    std::printf(
        "cudal2_rtgen: %zu table(s) (%s): %zu kernel(s) (%zu compiled, %zu cublaslt configurations), %zu entr%s\n",
        groups.size(), sources.c_str(), kernels, compiled, kernels - compiled, entries, entries == 1 ? "y" : "ies");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudal2_rtgen: error: %s\n", e.what());
    return 1;
  }
}
