#include "cli/spec_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "core/input_file.hpp"
#include "core/problem.hpp"

namespace cudal2 {

SpecList read_spec_list(const std::string& path) {
  std::istringstream in(read_input_file(path, "spec list"));
  SpecList out;
  std::map<std::string, size_t> index;  // spec text -> position in out.specs
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto gap = line.find_first_of(" \t", first);
    if (gap == std::string::npos)
      throw InputError(
          fmt::format("{}:{}: expected 'M,N,K SPEC TEXT', got '{}'", path, no, excerpt(line.substr(first))));
    try {
      const Shape shape = parse_shape(line.substr(first, gap - first));
      const KernelSpec spec = parse_spec(line.substr(gap + 1));
      if (std::find(out.shapes.begin(), out.shapes.end(), shape) == out.shapes.end()) out.shapes.push_back(shape);
      const auto [it, added] = index.emplace(spec.text(), out.specs.size());
      if (added) {
        out.specs.push_back(spec);
        out.spec_shapes.emplace_back();
      }
      auto& on = out.spec_shapes[it->second];
      if (std::find(on.begin(), on.end(), shape) == on.end()) on.push_back(shape);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}:{}: {}", path, no, excerpt(e.what(), 300)));
    }
  }
  if (out.specs.empty()) throw InputError(fmt::format("spec list '{}' names no (shape, spec) pair", path));
  return out;
}

}  // namespace cudal2
