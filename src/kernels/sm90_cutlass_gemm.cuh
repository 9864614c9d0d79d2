// Family sm90_cutlass: one CUTLASS 3.x SM90 GEMM (TMA loads, WGMMA, warp-specialized
// mainloop, persistent or stream-K tile scheduler) behind the cudal2 kernel C ABI.
// One configuration is the type cudal2_sm90::Gemm<Config<...>> (CUTLASS's types as template
// arguments); a generated .cu includes this file and exports that type through the kernel C ABI
// (cudal2_kernel_shim.h):
//   #include "sm90_cutlass_gemm.cuh"
//   using cudal2_kernel = cudal2_sm90::Gemm<cudal2_sm90::Config<cutlass::layout::RowMajor, float, 128, 128, 64,
//       1, 1, cutlass::gemm::KernelTmaWarpSpecializedCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative,
//       cutlass::gemm::PersistentScheduler, 0>>;
//   CUDAL2_EXPORT_KERNEL_ABI(cudal2_kernel, "sm90_cutlass nn f32 tile=128x128x64 cluster=1x1 ...")
#pragma once
#include <cstring>
#include <type_traits>

#include "cudal2_kernel_shim.h"
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

// Everything here has internal linkage. Several artifacts are loaded into one process; with
// external linkage, GCC emits the function-local statics below (the adapter state) as
// STB_GNU_UNIQUE symbols, which the dynamic loader merges across RTLD_LOCAL libraries, so every
// artifact would drive the first one's kernel object. (Seen on the H100: a process that loaded
// four artifacts hung; each alone passed.)
namespace cudal2_sm90 {
namespace {
using namespace cute;

// One compile-time configuration (codegen/family_sm90_cutlass.cpp writes it from a spec), in the
// spec text's order: B's layout (RowMajor: NN; ColumnMajor: TN), the accumulator type (float or
// cutlass::half_t), the tile, the cluster, the mainloop (KernelSchedule), epilogue
// (EpilogueSchedule) and tile scheduler, and the stage count (0: auto).
template <class LayoutBType, class Accumulator, int kTileM, int kTileN, int kTileK, int kClusterM, int kClusterN,
          class MainloopSchedule, class EpilogueSchedule, class TileScheduler, int kStageCount>
struct Config {
  using LayoutB = LayoutBType;
  using ElementAcc = Accumulator;
  using TileShape = Shape<Int<kTileM>, Int<kTileN>, Int<kTileK>>;
  using ClusterShape = Shape<Int<kClusterM>, Int<kClusterN>, _1>;
  using Mainloop = MainloopSchedule;
  using Epilogue = EpilogueSchedule;
  using Scheduler = TileScheduler;
  static constexpr int kStages = kStageCount;
};

// The mainloop's stage count: fixed, or (0) as many stages as fit beside the epilogue's shared
// memory.
template <int kStages, class CollectiveEpilogue>
struct StagesOf {
  using type = cutlass::gemm::collective::StageCount<kStages>;
};
template <class CollectiveEpilogue>
struct StagesOf<0, CollectiveEpilogue> {
  using type = cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
      sizeof(typename CollectiveEpilogue::SharedStorage))>;
};

using ElementAB = cutlass::half_t;
using ElementC = cutlass::half_t;
using LayoutA = cutlass::layout::RowMajor;
using LayoutC = cutlass::layout::RowMajor;
// TMA needs 16-byte aligned rows: 8 fp16 elements.
constexpr int kAlign = 8;

// Configuration Cfg's CUTLASS kernel and the kernel C ABI (cudal2_kernel_shim.h) over it.
template <class Cfg>
struct Gemm {
  using ElementAcc = typename Cfg::ElementAcc;
  using LayoutB = typename Cfg::LayoutB;
  using TileShape = typename Cfg::TileShape;
  using ClusterShape = typename Cfg::ClusterShape;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, ElementAcc, ElementAcc, ElementC, LayoutC, kAlign, ElementC,
      LayoutC, kAlign, typename Cfg::Epilogue>::CollectiveOp;

  using Stages = typename StagesOf<Cfg::kStages, CollectiveEpilogue>::type;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementAB, LayoutA, kAlign, ElementAB, LayoutB, kAlign,
      ElementAcc, TileShape, ClusterShape, Stages, typename Cfg::Mainloop>::CollectiveOp;

  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                          CollectiveEpilogue, typename Cfg::Scheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
  static constexpr bool kStreamK = std::is_same_v<typename Cfg::Scheduler, cutlass::gemm::StreamKScheduler>;

  // A template so the stream-K fields are only looked up when the scheduler has them.
  template <class SchedulerArgs>
  static void set_stream_k(SchedulerArgs& sa, const cudal2_gemm_args& a) {
    if constexpr (kStreamK) {
      using DM = cutlass::gemm::kernel::detail::DecompositionMode;
      sa.splits = a.splits;
      sa.decomposition_mode = a.decomposition == 1   ? DM::DataParallel
                              : a.decomposition == 2 ? DM::SplitK
                              : a.decomposition == 3 ? DM::StreamK
                                                     : DM::Heuristic;
    }
  }

  static typename Adapter::Arguments make_args(const cudal2_gemm_args& a) {
    using RO = cutlass::gemm::kernel::detail::RasterOrderOptions;
    const int m = static_cast<int>(a.m), n = static_cast<int>(a.n), k = static_cast<int>(a.k);
    auto sA = cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, make_shape(m, k, 1));
    auto sB = cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, make_shape(n, k, 1));
    auto sC = cutlass::make_cute_packed_stride(typename GemmKernel::StrideC{}, make_shape(m, n, 1));
    auto sD = cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, make_shape(m, n, 1));
    cutlass::KernelHardwareInfo hw;
    hw.device_id = 0;
    cudaGetDevice(&hw.device_id);
    // Cached: querying the SM count costs a driver call on every launch otherwise.
    static int sms = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hw.device_id);
    hw.sm_count = sms;
    typename Adapter::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {m, n, k, 1},
        {static_cast<const ElementAB*>(a.A), sA, static_cast<const ElementAB*>(a.B), sB},
        {{ElementAcc(1), ElementAcc(0)}, static_cast<const ElementC*>(a.C), sC, static_cast<ElementC*>(a.C), sD},
        hw};
    args.scheduler.raster_order = a.raster == 1 ? RO::AlongM : a.raster == 2 ? RO::AlongN : RO::Heuristic;
    args.scheduler.max_swizzle_size = a.swizzle;
    set_stream_k(args.scheduler, a);
    return args;
  }

  // One adapter per artifact; re-initialized only when the arguments change, so a repeated call
  // (the timing loop, a graph capture) is just the launch. Not thread-safe: one caller at a time.
  struct State {
    Adapter gemm;
    cudal2_gemm_args last{};
    bool ready = false;
  };
  static State& state() {
    static State s;
    return s;
  }

  static const char* shape_refusal(const cudal2_gemm_args& a) {
    const bool b_col = std::is_same_v<LayoutB, cutlass::layout::ColumnMajor>;
    if (const char* why = cudal2_shim::sizes_refusal(a)) return why;
    // Row pitches in bytes must be multiples of 16 for TMA: A rows (K), B rows (N, or K when
    // column-major), C rows (N).
    if (a.k % kAlign || a.n % kAlign || (b_col && a.k % kAlign))
      return "sm90_cutlass needs K and N to be multiples of 8 (16-byte rows for TMA)";
    if (a.swizzle != 1 && a.swizzle != 2 && a.swizzle != 4 && a.swizzle != 8) return "swizzle must be 1, 2, 4 or 8";
    if (a.splits < 1 || (!kStreamK && (a.splits != 1 || a.decomposition != 0)))
      return "splits/decomposition need the stream-K scheduler";
    return nullptr;
  }

  // The kernel C ABI (cudal2_kernel_shim.h).
  static const char* refusal(const cudal2_gemm_args& a) {
    if (const char* why = shape_refusal(a)) return why;
    if (Adapter::can_implement(make_args(a)) != cutlass::Status::kSuccess)
      return "CUTLASS can_implement refused these arguments";
    return nullptr;
  }

  static size_t workspace_size(const cudal2_gemm_args& a) { return Adapter::get_workspace_size(make_args(a)); }

  static const char* run(const cudal2_gemm_args& a, void* stream) {
    auto& st = state();
    auto s = static_cast<cudaStream_t>(stream);
    // Stream-K keeps reduction flags in the workspace: initialize (which clears them, a
    // capturable memset) before every launch rather than trust the previous launch to reset them.
    if (kStreamK || !st.ready || std::memcmp(&st.last, &a, sizeof a) != 0) {
      if (const char* why = shape_refusal(a)) return why;
      auto args = make_args(a);
      if (Adapter::get_workspace_size(args) > a.workspace_bytes) return "workspace too small";
      if (st.gemm.initialize(args, a.workspace, s) != cutlass::Status::kSuccess) {
        st.ready = false;
        return "CUTLASS initialize failed";
      }
      st.last = a;
      st.ready = true;
    }
    if (st.gemm.run(s) != cutlass::Status::kSuccess) return "CUTLASS run failed (launch error)";
    return nullptr;
  }
};

}  // namespace
}  // namespace cudal2_sm90
