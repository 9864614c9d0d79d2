#include "llm/records.hpp"

#include <fmt/format.h>

#include "codegen/spec.hpp"
#include "store/store.hpp"

namespace cudal2::llm {

std::string free_spec_text(const std::string& source, Layout layout, Accum accum) {
  return fmt::format("source {:016x} {} {}", fnv1a64(source), to_string(layout), to_string(accum));
}
std::string free_spec_hash(const std::string& source, Layout layout, Accum accum) {
  return fmt::format("{:016x}", fnv1a64(free_spec_text(source, layout, accum)));
}

// Creates / migrates the store like every writer of it.
Records::Records(const std::string& db_path) : db_(store::Store::open(db_path)) {}
Records Records::open_to_read(const std::string& db_path) {
  return Records(store::Store::open_to_read(db_path, store::Verify::Full));
}
Records::~Records() = default;
Records::Records(Records&&) noexcept = default;

std::int64_t Records::put_turn(const TurnRow& t) { return db_.put_turn(t); }

void Records::set_outcome(std::int64_t id, const std::string& status, const std::string& detail,
                          std::optional<double> time_us, std::optional<double> baseline_us,
                          std::optional<double> reward) {
  db_.set_turn_outcome(id, status, detail, time_us, baseline_us, reward);
}

std::vector<TurnRow> Records::turns(const std::string& run_id) const { return db_.turns(run_id); }

std::int64_t Records::put_profile(const ProfileRow& p) { return db_.put_profile(p); }

std::optional<ProfileRow> Records::latest_profile(const std::string& spec_hash, std::int64_t m, std::int64_t n,
                                                  std::int64_t k) const {
  return db_.latest_profile(spec_hash, m, n, k);
}

std::vector<std::string> Records::best_gpus(const std::string& spec_hash, const std::string& dtype,
                                            const std::string& layout, std::int64_t m, std::int64_t n,
                                            std::int64_t k) const {
  return db_.best_gpus(spec_hash, {"", dtype, layout, m, n, k, ""});
}

std::string Records::measured_gpu(const std::string& spec_hash, const std::string& dtype, const std::string& layout,
                                  std::int64_t m, std::int64_t n, std::int64_t k) const {
  return db_.measured_gpu(spec_hash, {"", dtype, layout, m, n, k, ""});
}

std::string Records::failure_detail(const std::string& spec_hash) const { return db_.failure_detail(spec_hash); }

}  // namespace cudal2::llm
