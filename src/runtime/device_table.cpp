// runtime/device_table.hpp.
#include "runtime/device_table.hpp"

#include <cudal2/cudal2.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/select.hpp"

namespace cudal2::rt {

namespace {

std::vector<TableId> table_ids() {
  std::vector<TableId> v;
  for (int i = 0; i < kNumTables; ++i)
    v.push_back({kTables[i].gpu, kTables[i].source, kTables[i].cc_major, kTables[i].cc_minor});
  return v;
}

}  // namespace

cudaError_t device_name(int device, std::string& name) {
  static std::mutex mu;
  static std::map<int, std::string> names;
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = names.find(device); it != names.end()) {
    name = it->second;
    return cudaSuccess;
  }
  cudaDeviceProp prop{};
  if (const cudaError_t ce = cudaGetDeviceProperties(&prop, device); ce != cudaSuccess) return ce;
  name = names[device] = prop.name;
  return cudaSuccess;
}

const Table* device_table(const std::string& name, int major, int minor) {
  const int i = select_table(table_ids(), name, major, minor, std::getenv("CUDAL2_TABLE"));
  return i < 0 ? nullptr : &kTables[i];
}

}  // namespace cudal2::rt

using cudal2::rt::device_name;
using cudal2::rt::device_table;
using cudal2::rt::kNumTables;
using cudal2::rt::kTables;
using cudal2::rt::Table;

extern "C" {

cudal2_table_info cudal2_get_table_info(void) {
  int dev = 0, major = 0, minor = 0;
  std::string name;
  const Table* t = nullptr;
  if (cudaGetDevice(&dev) == cudaSuccess && device_name(dev, name) == cudaSuccess &&
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess) {
    t = device_table(name, major, minor);
  } else {
    cudaGetLastError();  // no device: report no table, leave no sticky error behind
  }
  if (!t) return {"", "", 0, 0};
  return {t->gpu, t->source, t->num_kernels, t->num_entries};
}

int cudal2_get_table_count(void) { return kNumTables; }

cudal2_table_info cudal2_get_table_info_at(int i) {
  if (i < 0 || i >= kNumTables) return {"", "", 0, 0};
  return {kTables[i].gpu, kTables[i].source, kTables[i].num_kernels, kTables[i].num_entries};
}

}  // extern "C"
