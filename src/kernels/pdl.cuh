// Programmatic dependent launch (PDL) and cluster launch attributes, shared by our kernel
// families (wgmma, wgmma_swapab, lat).
//
// Launched with cudaLaunchAttributeProgrammaticStreamSerialization, a kernel may start while the
// kernel before it in the stream is still finishing: its prologue (barrier set-up, tensor-map
// prefetch, index math) overlaps that kernel's tail instead of following its launch latency.
// grid_dependency_wait() returns once the previous grid has completed and its writes are
// visible: every thread calls it before touching global memory. launch_dependents() lets the next
// PDL kernel be scheduled once every CTA of this grid has called it (or exited). Both are no-ops
// when the launch had no such attribute.
#pragma once
#include <cuda_runtime.h>

// Programmatic dependent launch on (1) or off (0: an A/B build).
#ifndef CUDAL2_PDL
#define CUDAL2_PDL 1
#endif

namespace cudal2_pdl {
namespace {

__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}
// The launch side, for cudaLaunchKernelEx: attributes appended to at[n++].
inline void add_cluster_attribute(cudaLaunchAttribute* at, unsigned& n, unsigned x, unsigned y = 1, unsigned z = 1) {
  at[n].id = cudaLaunchAttributeClusterDimension;
  at[n].val.clusterDim.x = x, at[n].val.clusterDim.y = y, at[n].val.clusterDim.z = z;
  ++n;
}
inline void add_pdl_attribute(cudaLaunchAttribute* at, unsigned& n) {
  if (!CUDAL2_PDL) return;
  at[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[n].val.programmaticStreamSerializationAllowed = 1;
  ++n;
}

}  // namespace
}  // namespace cudal2_pdl
