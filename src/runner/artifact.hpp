#pragma once
// A compiled kernel artifact (shared object with the kernel C ABI) loaded with dlopen, and a
// Method over it. Only the evaluator's judge process should load untrusted artifacts.
#include <memory>
#include <string>

#include "codegen/spec.hpp"
#include "measure/method.hpp"

extern "C" {
struct cudal2_gemm_args;
}

namespace cudal2 {

class Artifact {
 public:
  // Throws MethodUnsupported when the file cannot be loaded or lacks the ABI.
  explicit Artifact(const std::string& path);
  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;
  int abi_version() const { return abi_(); }
  std::string describe() const { return describe_(); }
  // "" when the artifact can run these arguments, else its reason.
  std::string can_implement(const cudal2_gemm_args& a) const;
  size_t workspace_size(const cudal2_gemm_args& a) const { return workspace_(&a); }
  void run(const cudal2_gemm_args& a, cudaStream_t s) const;  // throws MethodUnsupported

 private:
  void* lib_ = nullptr;
  int (*abi_)() = nullptr;
  const char* (*describe_)() = nullptr;
  int (*can_)(const cudal2_gemm_args*, char*, size_t) = nullptr;
  size_t (*workspace_)(const cudal2_gemm_args*) = nullptr;
  int (*run_)(const cudal2_gemm_args*, void*, char*, size_t) = nullptr;
};

// Runs an artifact with a spec's runtime knobs. Its workspace comes from Operands (the bench's
// workspace buffer); prepare() refuses problems the artifact cannot run or whose workspace
// exceeds it.
MethodPtr make_artifact_runner(std::shared_ptr<Artifact> artifact, const KernelSpec& spec, std::string name);

}  // namespace cudal2
