#pragma once
// The LLM proposer's prompt: a template file in the repo (prompts/kernel.md) filled with the task,
// the kernel C ABI, the problem, the best source known for this shape (or a neighbour's, found in
// the store by shape similarity), its profiler metrics, and the previous attempt's errors; and
// the extraction of the kernel source from the model's reply. No CUDA.
#include <map>
#include <optional>
#include <string>

#include "core/problem.hpp"

namespace cudal2::llm {

// "{{name}}" is replaced by vars[name] ("" when absent); "{{#name}}...{{/name}}" keeps its inside
// only when vars[name] is not empty (sections do not nest). Unknown names become "".
std::string render_template(const std::string& tmpl, const std::map<std::string, std::string>& vars);

// The default template (prompts/kernel.md, found as share/cudal2/prompts/kernel.md beside the
// binary: core/paths.hpp; $CUDAL2_PROMPT overrides) and the kernel ABI header (share/cudal2/kernels,
// $CUDAL2_KERNELS_DIR overrides). Throw InputError when unreadable.
std::string default_template_path();
std::string read_text_file(const std::string& path);
std::string kernel_abi_text();

// Where the prompt's reference kernel came from.
struct Reference {
  std::string source;     // kernel source ("" when the store has nothing for this layout/accum)
  std::string spec_text;  // the spec (or "source <hash> ..." for a free-form kernel)
  std::string spec_hash;
  std::string gpu;
  Shape shape;  // the shape it is the best for
  double median_us = 0;
  bool same_shape = false;  // false: a neighbour's
  std::string metrics;      // profiler metrics stored for it on that shape, as text ("" when none)
};

// Log-space distance between shapes (|log2 m - log2 m'| + ... ), what "neighbour" means.
double shape_distance(const Shape& a, const Shape& b);

// The best kernel in the store for this problem (any GPU, or `gpu` when given), else the nearest
// shape's best with the same layout and accumulator. Sources of generated specs are regenerated;
// long sources are cut to max_chars with a note. nullopt when the store has no best of that kind
// (or no store file exists).
std::optional<Reference> retrieve_reference(const std::string& db_path, const Problem& p, const std::string& gpu = "",
                                            size_t max_chars = 16000);

struct PromptInputs {
  Problem problem;
  std::optional<Reference> reference;
  std::string previous_errors;  // the last attempt's compiler or verification errors ("" none)
  std::string previous_source;  // the attempt those errors are about
};
// The variables the template sees: task, abi, m, n, k, shape, layout, layout_text, accum,
// accum_text, reference_source, reference_note, metrics, errors, previous_source.
std::map<std::string, std::string> prompt_vars(const PromptInputs& in);

// The kernel source in a reply. A fenced block (```cuda, ```cu, ```cpp, ```c++, ```c or bare
// ```) that defines cudal2_run (or exports it with CUDAL2_EXPORT_KERNEL_ABI) wins; the last such block when several do;
// else the longest block.
struct Extracted {
  std::string source;  // "" when none
  std::string error;   // "" or "no-code" (no fenced block), "unterminated" (a fence never closed:
                       // a reply cut by max_tokens), "no-entry-point" (no block defines cudal2_run)
};
Extracted extract_code(const std::string& reply);

}  // namespace cudal2::llm
