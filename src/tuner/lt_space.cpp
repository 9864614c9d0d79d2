#include "tuner/lt_space.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "protocol/protocol.hpp"
#include "sandbox/sandbox.hpp"

namespace cudal2 {

namespace {

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace

std::vector<std::pair<Problem, std::vector<KernelSpec>>> judge_lt_space(const std::string& judge_exe,
                                                                        const std::vector<Shape>& shapes,
                                                                        const std::vector<Layout>& layouts, Accum accum,
                                                                        int max_per_problem, int timeout_s) {
  const protocol::LtSpaceJob job{shapes, layouts, accum, max_per_problem};
  sandbox::Options wopt;
  wopt.timeout = std::chrono::seconds(timeout_s);
  sandbox::Child judge({judge_exe.empty() ? self_exe() : judge_exe, "judge"}, wopt);
  const auto r = judge.call(to_json(job), std::chrono::seconds(timeout_s));
  std::optional<protocol::ErrorAnswer> refused;
  std::string why = r.message;
  if (r.ok()) {
    try {
      refused = protocol::error_of(r.response);
      if (refused) why = refused->error;
    } catch (const protocol::ProtocolError& e) {
      refused = protocol::ErrorAnswer{e.what()};
      why = e.what();
    }
  }
  if (!r.ok() || refused) throw std::runtime_error("the judge could not list the cublaslt family's space: " + why);
  std::vector<std::pair<Problem, std::vector<KernelSpec>>> out;
  try {
    for (const auto& sp : protocol::parse_lt_space_answer(r.response).spaces) {
      Problem p;
      p.shape = sp.shape, p.layout = sp.layout, p.accum = accum;
      std::vector<KernelSpec> specs;
      for (const auto& t : sp.specs) specs.push_back(parse_spec(t));
      out.emplace_back(p, std::move(specs));
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the judge's lt-space answer is malformed: ") + e.what());
  }
  return out;
}

}  // namespace cudal2
