#pragma once
// Where the files the programs read at run time live (kernel headers, CUTLASS's headers, the LLM
// prompt template, the report script), found relative to the running program so that a build
// tree or an installed tree works from any directory and binaries hold no build-machine paths.
//
// Layout, the same in both trees (`cmake --install` makes the installed one; the build makes the
// build tree's):
//   <prefix>/bin/cudal2                   <build>/cudal2, <build>/tests/*
//   <prefix>/share/cudal2/kernels/        <build>/share/cudal2/kernels/   (copies of src/kernels)
//   <prefix>/share/cudal2/cutlass/        <build>/share/cudal2/cutlass -> relative link to CUTLASS
//   <prefix>/share/cudal2/prompts/        <build>/share/cudal2/prompts/
//   <prefix>/share/cudal2/report.py       (build tree: python/cudal2/report.py of the checkout)
// Environment variables override: CUDAL2_DATA_DIR (the share/cudal2 directory),
// CUDAL2_KERNELS_DIR, CUTLASS_DIR (a CUTLASS checkout or the wheel's source/ directory).
#include <filesystem>
#include <string>
#include <vector>

namespace cudal2::paths {

// The directory of the program image holding libcudal2 (the file /proc/self/maps names for one of
// its functions: the executable, libcudal2 being static), else that of /proc/self/exe.
std::filesystem::path self_dir();

// share/cudal2 for a program living in bin_dir: bin_dir/share/cudal2 (build tree: build/cudal2)
// or bin_dir/../share/cudal2 (installed tree; build/tests/*), the first holding kernels/.
// Empty when neither does.
std::filesystem::path find_data_dir(const std::filesystem::path& bin_dir);

// $CUDAL2_DATA_DIR, else find_data_dir(self_dir()); empty when not found.
std::filesystem::path data_dir();

// Our kernel headers: $CUDAL2_KERNELS_DIR, else <data_dir>/kernels; empty when not found.
std::string kernels_dir();

// CUTLASS's root (include/ and tools/util/include/ below it): $CUTLASS_DIR, else
// <data_dir>/cutlass when it holds include/cutlass/cutlass.h; empty when not found.
std::string cutlass_root();

// The include directories of a CUTLASS root (none for an empty root).
std::vector<std::string> cutlass_include_dirs(const std::string& root);

}  // namespace cudal2::paths
