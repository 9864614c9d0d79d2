#pragma once
// Which of the library's tables a device uses. Each table was measured on one GPU: its kernels
// are compiled for that GPU's compute capability, and its cuBLASLt configurations and "cuBLASLt
// was faster here" decisions are only known to hold there. So a handle takes the table whose GPU
// name and compute capability are the device's, and a device with no such table runs everything
// through cuBLASLt's heuristic. CUDAL2_TABLE overrides the name (another table of the same compute
// capability, e.g. to try the H100 table on an H100 PCIe), or turns tables off ("none").
#include <string_view>
#include <vector>

namespace cudal2::rt {

struct TableId {
  std::string_view gpu, source;
  int cc_major = 0, cc_minor = 0;
};

// Index into tables, or -1 for none. override: CUDAL2_TABLE's value (null or empty: unset), a
// table's GPU name or file name, or "none"/"off".
inline int select_table(const std::vector<TableId>& tables, std::string_view device, int cc_major, int cc_minor,
                        const char* override = nullptr) {
  std::string_view want = device;
  bool by_source = false;
  if (override && *override) {
    want = override;
    if (want == "none" || want == "off") return -1;
    by_source = true;
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    const auto& t = tables[i];
    if (t.cc_major != cc_major || t.cc_minor != cc_minor) continue;
    if (t.gpu == want || (by_source && t.source == want)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace cudal2::rt
