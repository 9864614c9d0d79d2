#pragma once
// A kernel family as data: everything KernelSpec, parse_spec and generate_source need to know
// about one family, behind one table (codegen/families.cpp). Each family lives in its own file,
// codegen/family_<name>.cpp: its text fields, defaults, validity rules, enumeration and code
// generation. spec.cpp keeps only what does not depend on the family (the positional words,
// key=value syntax, duplicate fields, the shared field parsers below) and codegen.cpp only the
// lookup. Adding a family: one new file defining `const Family& <name>_family()`, and its
// declaration and table line in families.cpp.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/spec.hpp"

namespace cudal2 {

struct Family {
  std::string_view name;  // the spec text's first word
  // known_families() lists it: what `--families` and the search enumerate. cublaslt is not listed:
  // its space is asked of the GPU per shape (cublaslt_neighbourhood).
  bool listed = true;
  // Run by the judge process itself (cuBLASLt calls on the judge's buffers, no candidate code),
  // not by a confined runner loading the artifact.
  bool runs_in_judge = false;
  // The text fields in canonical order (runtime knobs last): parse_spec refuses any other key.
  const std::vector<std::string>& (*fields)() = nullptr;
  // What parse_spec starts from (missing fields keep these values).
  KernelSpec (*default_spec)() = nullptr;
  // Sets one of fields() from its text; throws InputError naming the field.
  void (*parse_field)(KernelSpec& s, std::string_view key, std::string_view value) = nullptr;
  std::string (*compile_text)(const KernelSpec& s) = nullptr;  // the text before " | "
  std::string (*text)(const KernelSpec& s) = nullptr;          // the whole canonical text
  std::string (*invalid_reason)(const KernelSpec& s) = nullptr;
  // Every valid spec for one layout and accumulator, in a stable order (throws InputError where
  // the family has no fixed space).
  std::vector<KernelSpec> (*enumerate)(Layout layout, Accum accum, bool with_runtime_knobs) = nullptr;
  std::string (*shape_refusal)(const KernelSpec& s, const Shape& shape) = nullptr;
  // The .cu exposing the kernel C ABI (src/kernels/cudal2_kernel_abi.h) for the compile-time part.
  std::string (*generate_source)(const KernelSpec& s) = nullptr;
};

// Every family, in the registry's order (known_families() is the listed ones in this order).
const std::vector<const Family*>& all_families();
// The family named `name`; nullptr when there is none.
const Family* find_family(std::string_view name);
// Whether a candidate runs in the judge's own process like a baseline (a `cublaslt` spec: a
// cuBLASLt call generated from data) instead of a confined runner (everything else); spec_text is
// "" for a free-form source, which never does.
bool runs_in_judge(const KernelSpec& spec, const std::string& spec_text);
// The family of a spec, for printing and code generation: a spec whose family is unknown (made by
// hand, never by parse_spec) prints and generates as sm90_cutlass, KernelSpec{}'s family.
const Family& family_of(const KernelSpec& s);

// ---- Helpers the families share (defined in spec.cpp and codegen.cpp) ----

// The whole number `v` spells (all of it), or nothing.
std::optional<int> whole_number(std::string_view v);
// A whole number; throws InputError "bad spec: <field>='<v>' is not a whole number".
int parse_int(std::string_view v, std::string_view field);
// `count` whole numbers joined by 'x' ("128x128x64").
std::vector<int> parse_dims(std::string_view v, size_t count, std::string_view field);
// The fields several families share, as plain values (no `auto`): tile, cluster, warps, kwarps,
// mainloop, epilogue, scheduler, stages, raster, swizzle, decomposition, splits.
void parse_common_field(KernelSpec& s, std::string_view key, std::string_view value);
bool is_pow2(int x);
// Families whose only runtime knob is splits: "" when raster, swizzle and decomposition are at
// their defaults, else why not.
std::string splits_only_knobs_reason(const KernelSpec& s);
// Their text: "<compile_text> | splits=N".
std::string splits_only_text(const KernelSpec& s);
// A source instantiating a family's header by type: a comment with the compile text,
// `#include "<header>"`, `using cudal2_kernel = <type>;` and the kernel C ABI's export of it
// (CUDAL2_EXPORT_KERNEL_ABI, src/kernels/cudal2_kernel_shim.h), describing itself as compile_text.
std::string type_source(std::string_view compile_text, std::string_view header, std::string_view type);
// One constant of a named configuration: `static constexpr <type> <name> = <value>;`.
struct ConfigField {
  ConfigField(std::string_view name, bool value);
  ConfigField(std::string_view name, int value);
  std::string type, name, value;
};
// type_source with the configuration spelled out by name, for a family whose Gemm<Cfg> reads
// Cfg::kLayoutTN, Cfg::kTileM, ... (wgmma, wgmma_swapab): the source defines
//   namespace { struct cudal2_config { static constexpr bool kLayoutTN = false; ... }; }
// and instantiates `<gemm><cudal2_config>` (gemm: e.g. "cudal2_wgmma::Gemm"), so that a reader of
// a generated source or of the compile cache sees what each value is, not a position in a list.
std::string named_config_source(std::string_view compile_text, std::string_view header, std::string_view gemm,
                                const std::vector<ConfigField>& fields);

}  // namespace cudal2
