#pragma once
// Which of the library's tables a device uses (runtime/select.hpp: by name and compute
// capability; CUDAL2_TABLE overrides), and the cudal2_get_table_* calls that report them.
#include <cuda_runtime.h>

#include <string>

#include "runtime/table.hpp"

namespace cudal2::rt {

// A device's name, asked once per device: cudaGetDeviceProperties gathers every property and may
// take milliseconds, and the bench asks for the table of each shape it prepares.
cudaError_t device_name(int device, std::string& name);

// The table of a device, or null; CUDAL2_TABLE is read on every call.
const Table* device_table(const std::string& name, int major, int minor);

}  // namespace cudal2::rt
