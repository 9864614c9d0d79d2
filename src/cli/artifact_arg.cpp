// `cudal2 eval --artifact PATH.so[@SPEC]` (src/cli/artifact_arg.hpp).
#include "cli/artifact_arg.hpp"

#include <filesystem>

#include "codegen/family.hpp"
#include "core/problem.hpp"

namespace cudal2::cli {

EvalRequest::Prebuilt parse_artifact_arg(const std::string& arg) {
  // The first ".so@" ends the path: a spec's text never contains it, a path rarely does.
  const auto at = arg.find(".so@");
  const std::string path = at == std::string::npos ? arg : arg.substr(0, at + 3);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError("--artifact: no such file '" + path + "' (a .so with the kernel C ABI)");
  EvalRequest::Prebuilt out;
  // The runner opens it from a directory of its own: the path must not depend on ours.
  out.path = std::filesystem::absolute(path).lexically_normal().string();
  if (at != std::string::npos) {
    out.spec = parse_spec(arg.substr(at + 4));
    if (runs_in_judge(*out.spec, out.spec->text()))
      throw InputError("--artifact: a " + out.spec->family +
                       " spec runs in the judge from data and has no artifact; evaluate it with --spec");
  }
  return out;
}

}  // namespace cudal2::cli
