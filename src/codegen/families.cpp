// The registry of kernel families (codegen/family.hpp). Adding a family: its file
// codegen/family_<name>.cpp, its declaration below and its line in the table.
#include "codegen/family.hpp"

namespace cudal2 {

const Family& sm90_cutlass_family();  // family_sm90_cutlass.cpp
const Family& mma_family();           // family_mma.cpp
const Family& tiny_family();          // family_tiny.cpp
const Family& lat_family();           // family_lat.cpp
const Family& lat_staged_family();    // family_lat_staged.cpp
const Family& wgmma_family();         // family_wgmma.cpp
const Family& wgmma_swapab_family();  // family_wgmma_swapab.cpp
const Family& stream_family();        // family_stream.cpp
const Family& stream_sweep_family();  // family_stream_sweep.cpp
const Family& cublaslt_family();      // family_cublaslt.cpp

const std::vector<const Family*>& all_families() {
  // The order is known_families()'s and the search's.
  static const std::vector<const Family*> table{
      &sm90_cutlass_family(), &mma_family(),        &tiny_family(),   &wgmma_family(),        &wgmma_swapab_family(),
      &lat_family(),          &lat_staged_family(), &stream_family(), &stream_sweep_family(), &cublaslt_family(),
  };
  return table;
}

const Family* find_family(std::string_view name) {
  for (const Family* f : all_families())
    if (f->name == name) return f;
  return nullptr;
}

// A `cublaslt` spec is a call into cuBLASLt with an algorithm configuration: the same library as
// the baselines, so the judge builds that call from the spec's fields and runs it like them
// (baselines/cublaslt_config.hpp, docs/threat-model.md). That saves a JIT compile, a confined
// runner, IPC and a calibration per candidate, which is what makes tuning cuBLASLt's space over
// the whole grid affordable. Free-form sources (no spec text) and every other family are
// compiled and run in confined runners. Which families run in the judge is the family table's
// `runs_in_judge` (codegen/family.hpp).
bool runs_in_judge(const KernelSpec& spec, const std::string& spec_text) {
  const Family* f = find_family(spec.family);
  return !spec_text.empty() && f && f->runs_in_judge;
}

const Family& family_of(const KernelSpec& s) {
  const Family* f = find_family(s.family);
  return f ? *f : sm90_cutlass_family();
}

}  // namespace cudal2
