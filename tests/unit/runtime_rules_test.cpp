// The runtime's two host-side rules, without a GPU: which table a device uses (runtime/select.hpp)
// and which tuned M an off-table M of a tuned (N, K) takes (runtime/bucket.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/bucket.hpp"
#include "runtime/padded_rows.hpp"
#include "runtime/select.hpp"

namespace {

using cudal2::rt::BucketRule;
using cudal2::rt::pick_bucket;
using cudal2::rt::select_table;
using cudal2::rt::TableId;

const std::vector<TableId> kTables = {{"NVIDIA H100 80GB HBM3", "h100-f32.json", 9, 0},
                                      {"NVIDIA H200", "seed.json", 9, 0},
                                      {"NVIDIA B200", "b200.json", 10, 0}};

TEST(SelectTable, ByDeviceNameAndComputeCapability) {
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 80GB HBM3", 9, 0), 0);
  EXPECT_EQ(select_table(kTables, "NVIDIA H200", 9, 0), 1);
  EXPECT_EQ(select_table(kTables, "NVIDIA B200", 10, 0), 2);
  // Another H100 (other clocks, SM count, memory) has no table: cuBLASLt.
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 PCIe", 9, 0), -1);
  // The name alone is not enough: the kernels are compiled for the table's compute capability.
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 80GB HBM3", 8, 0), -1);
  EXPECT_EQ(select_table({}, "NVIDIA H100 80GB HBM3", 9, 0), -1);
}

TEST(SelectTable, EnvironmentOverride) {
  // By GPU name or file name, only among tables of the device's compute capability.
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 PCIe", 9, 0, "NVIDIA H100 80GB HBM3"), 0);
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 80GB HBM3", 9, 0, "seed.json"), 1);
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 80GB HBM3", 9, 0, "b200.json"), -1);
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 80GB HBM3", 9, 0, "none"), -1);
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 80GB HBM3", 9, 0, "off"), -1);
  EXPECT_EQ(select_table(kTables, "NVIDIA H100 80GB HBM3", 9, 0, ""), 0);  // empty: unset
}

TEST(BucketRule, Parse) {
  EXPECT_EQ(cudal2::rt::parse_bucket_rule("up"), BucketRule::Up);
  EXPECT_EQ(cudal2::rt::parse_bucket_rule("down"), BucketRule::Down);
  EXPECT_EQ(cudal2::rt::parse_bucket_rule("nearest"), BucketRule::Nearest);
  EXPECT_EQ(cudal2::rt::parse_bucket_rule("off"), BucketRule::Off);
  EXPECT_FALSE(cudal2::rt::parse_bucket_rule("Up"));
  EXPECT_FALSE(cudal2::rt::parse_bucket_rule(""));
}

// `cudal2 tune --model` buckets: 1, 2, 4, ..., 4096, plus a named 3000.
const std::vector<std::int64_t> kModelMs = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3000, 4096};

TEST(BucketRule, UpTakesTheNextTunedM) {
  auto up = [](std::int64_t m) {
    const int i = pick_bucket(kModelMs, m, BucketRule::Up);
    return i < 0 ? -1 : kModelMs[i];
  };
  EXPECT_EQ(up(1), 1);
  EXPECT_EQ(up(3), 4);
  EXPECT_EQ(up(5), 8);
  EXPECT_EQ(up(100), 128);
  EXPECT_EQ(up(128), 128);
  EXPECT_EQ(up(129), 256);
  EXPECT_EQ(up(2500), 3000);
  EXPECT_EQ(up(3500), 4096);
  EXPECT_EQ(up(4096), 4096);
  EXPECT_EQ(up(5000), -1);  // above every tuned M: no bucket
}

TEST(BucketRule, DownAndNearest) {
  auto pick = [](std::int64_t m, BucketRule r) {
    const int i = pick_bucket(kModelMs, m, r);
    return i < 0 ? -1 : kModelMs[i];
  };
  EXPECT_EQ(pick(3, BucketRule::Down), 2);
  EXPECT_EQ(pick(100, BucketRule::Down), 64);
  EXPECT_EQ(pick(5000, BucketRule::Down), 4096);
  EXPECT_EQ(pick(9000, BucketRule::Down), -1);     // 4096 is more than a factor 2 away
  EXPECT_EQ(pick(100, BucketRule::Nearest), 128);  // log distance 0.25 up against 0.45 down
  EXPECT_EQ(pick(70, BucketRule::Nearest), 64);
  EXPECT_EQ(pick(3, BucketRule::Nearest), 4);  // log(4/3) < log(3/2)
  EXPECT_EQ(pick(2900, BucketRule::Nearest), 3000);
  EXPECT_EQ(pick(5000, BucketRule::Nearest), 4096);
  EXPECT_EQ(pick(100, BucketRule::Off), -1);
}

TEST(BucketRule, OnlyWithinAFactorTwo) {
  // The grid's M (64..16384): M = 1 or 16 is not stretched to 64, M = 40 is.
  const std::vector<std::int64_t> grid = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384};
  EXPECT_EQ(pick_bucket(grid, 1, BucketRule::Up), -1);
  EXPECT_EQ(pick_bucket(grid, 16, BucketRule::Nearest), -1);
  EXPECT_EQ(pick_bucket(grid, 32, BucketRule::Up), -1);  // 64 is exactly 2x: not within
  EXPECT_EQ(pick_bucket(grid, 40, BucketRule::Up), 0);
  EXPECT_EQ(pick_bucket(grid, 10000, BucketRule::Up), 8);
  EXPECT_EQ(pick_bucket(grid, 10000, BucketRule::Down), 7);
  EXPECT_EQ(pick_bucket({}, 100, BucketRule::Up), -1);
}

}  // namespace

// The padded C for output rows off 16 bytes (runtime/padded_rows.hpp): TN only, N % 8 != 0 and at
// least 8 wide, K % 8 == 0 (A's and B's rows aligned); the stride rounds N up to 8, the buffer's
// bytes up to 256.
TEST(PaddedRows, OnlyTnOddWidthsWithAlignedKTakeAPaddedC) {
  using cudal2::rt::padded_c_bytes;
  using cudal2::rt::padded_ldc;
  EXPECT_EQ(padded_ldc(true, 4101, 4096), 4104);
  EXPECT_EQ(padded_ldc(true, 9, 16), 16);
  EXPECT_EQ(padded_ldc(true, 50257, 1024), 50264);
  EXPECT_EQ(padded_ldc(true, 4104, 4096), 0) << "aligned rows";
  EXPECT_EQ(padded_ldc(false, 4101, 4096), 0) << "NN: B's rows are off 16 bytes too";
  EXPECT_EQ(padded_ldc(true, 4101, 4100), 0) << "K % 8 != 0";
  EXPECT_EQ(padded_ldc(true, 7, 4096), 0) << "no whole 8 columns for cuBLASLt";
  EXPECT_EQ(padded_c_bytes(2048, 4104), size_t(2048) * 4104 * 2);
  EXPECT_EQ(padded_c_bytes(3, 16), size_t(256)) << "96 bytes, rounded up to 256";
  EXPECT_EQ(padded_c_bytes(1, 50264) % 256, 0u);
}

// Rows a chunk when the workspace cannot hold the whole padded C: multiples of 64 whose buffer
// takes at most half of the room, none under 64.
TEST(PaddedRows, ChunksTakeHalfTheRoomInWholeSixtyFours) {
  using cudal2::rt::padded_chunk_rows;
  EXPECT_EQ(padded_chunk_rows(size_t(32) << 20, 4104), 1984) << "2044 rows fit in 16 MiB";
  EXPECT_EQ(padded_chunk_rows(size_t(4) << 20, 4104), 192);
  EXPECT_EQ(padded_chunk_rows(size_t(1) << 20, 4104), 0) << "63 rows: no chunk";
  EXPECT_EQ(padded_chunk_rows(size_t(32) << 20, 50264), 128);
}
