#pragma once
// `cudal2 show --db STORE`: the store's best spec per shape for a GPU, with its speedups.
#include <string>

namespace cudal2::cli {
// Best spec per shape for a GPU (default: this machine's, else the only one in the store), with its
// speedup over the best cuBLAS and the best cuBLASLt auto-tuning time measured in the same job.
// Throws InputError for a missing store file or a GPU the store does not hold. Returns the exit code.
int print_best(const std::string& db_path, const std::string& gpu = "");
}  // namespace cudal2::cli
