#pragma once
// `cudal2 lt-space --shape M,N,K [--layout nn|tn] [--accum f32|f16] [--max N] [--details]`:
// prints the cublaslt family's specs worth trying for one shape on this GPU, one per line.
namespace cudal2 {
// argv[0] is "lt-space". Returns the process exit code.
int lt_space_main(int argc, char** argv);
}  // namespace cudal2
