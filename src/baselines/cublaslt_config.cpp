#include "baselines/cublaslt_config.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

#include "codegen/family_cublaslt.hpp"
#include "kernels/cublaslt_plan.h"

namespace cudal2 {

namespace {

bool aligned(const void* p, uint32_t bytes) { return bytes <= 1 || reinterpret_cast<uintptr_t>(p) % bytes == 0; }

class CublasLtConfigRunner final : public Method {
 public:
  CublasLtConfigRunner(KernelSpec spec, std::string name) : spec_(std::move(spec)), name_(std::move(name)) {
    if (spec_.family != kCublasLtFamily) throw InputError(fmt::format("'{}' is not a cublaslt spec", spec_.text()));
    if (const auto why = invalid_reason(spec_); !why.empty())
      throw InputError(fmt::format("bad cublaslt spec '{}': {}", spec_.text(), why));
    config_.algo = spec_.lt_algo, config_.tile = spec_.lt_tile, config_.stages = spec_.lt_stages;
    config_.splits = spec_.splits, config_.reduction = spec_.lt_reduction, config_.swizzle = spec_.lt_swizzle;
    config_.custom = spec_.lt_custom, config_.inner = spec_.lt_inner;
    config_.cluster = cublaslt_cluster_id(spec_.cluster_m, spec_.cluster_n);
  }
  ~CublasLtConfigRunner() override {
    cudal2_lt::destroy(problem_);
    if (handle_) cublasLtDestroy(handle_);
  }

  std::string name() const override { return name_; }
  Layout layout() const override { return spec_.layout; }
  Accum accum() const override { return spec_.accum; }

  void prepare(const Shape& shape, const Operands& ops, cudaStream_t) override {
    auto check = [](cublasStatus_t st, const char* what) {
      if (st != CUBLAS_STATUS_SUCCESS) throw MethodUnsupported(fmt::format("{}: {}", what, cublasLtGetStatusName(st)));
    };
    if (!handle_) check(cublasLtCreate(&handle_), "cublasLtCreate");
    cudal2_lt::destroy(problem_);
    const bool tn = spec_.layout == Layout::TN, f16 = spec_.accum == Accum::F16;
    if (!cudal2_lt::make_problem(shape.m, shape.n, shape.k, tn, f16, problem_)) check(problem_.status, problem_.failed);
    const char* failed = "configure";
    cublasLtMatmulHeuristicResult_t r{};
    check(cudal2_lt::configure_checked(handle_, f16, config_, problem_, &algo_, &r, &failed), failed);
    if (r.workspaceSize > ops.workspace_bytes)
      throw MethodUnsupported(
          fmt::format("needs {} bytes of workspace, the bench has {}", r.workspaceSize, ops.workspace_bytes));
    // cuBLASLt's A is our B, its B our A, its C and D our C.
    const auto al = cudal2_lt::min_alignment(algo_);
    if (!aligned(ops.B, al.a) || !aligned(ops.A, al.b) || !aligned(ops.C, al.c) || !aligned(ops.C, al.d))
      throw MethodUnsupported("operand pointers below the algorithm's minimum alignment");
    ops_ = ops;
    workspace_ = r.workspaceSize;
  }

  void run(cudaStream_t s) override {
    void* ws = workspace_ ? ops_.workspace : nullptr;
    const cublasStatus_t st = cudal2_lt::matmul(handle_, problem_, spec_.accum == Accum::F16, &algo_, ops_.A, ops_.B,
                                                ops_.C, ws, workspace_, s);
    if (st != CUBLAS_STATUS_SUCCESS)
      throw MethodUnsupported(fmt::format("cublasLtMatmul: {}", cublasLtGetStatusName(st)));
  }

  nlohmann::json details() const override {
    return {{"spec", spec_.text()}, {"hash", spec_.hash()}, {"workspace_bytes", workspace_}, {"in_judge", true}};
  }

 private:
  KernelSpec spec_;
  std::string name_;
  cudal2_lt::Config config_;
  cublasLtHandle_t handle_ = nullptr;
  cudal2_lt::Problem problem_;
  cublasLtMatmulAlgo_t algo_{};
  Operands ops_;
  size_t workspace_ = 0;
};

}  // namespace

MethodPtr make_cublaslt_config_runner(const KernelSpec& spec, std::string name) {
  return std::make_unique<CublasLtConfigRunner>(spec, std::move(name));
}

}  // namespace cudal2
