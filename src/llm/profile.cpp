#include "llm/profile.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace cudal2::llm {

namespace {

const char* kTensor = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
const char* kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
const char* kL2 = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
const char* kDuration = "gpu__time_duration.sum";

std::string stall_metric(const std::string& reason) {
  return "smsp__average_warps_issue_stalled_" + reason + "_per_issue_active.ratio";
}

// One CSV record (RFC 4180: quoted fields, doubled quotes); records do not span lines in ncu's
// output.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"', ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur), cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::optional<double> number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  if (s.empty() || s == "n/a" || s == "N/A") return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

const std::vector<std::string>& stall_reasons() {
  static const std::vector<std::string> r = {
      "barrier",         "branch_resolving",   "dispatch_stall",   "drain",        "imc_miss",     "lg_throttle",
      "long_scoreboard", "math_pipe_throttle", "membar",           "mio_throttle", "misc",         "no_instruction",
      "not_selected",    "selected",           "short_scoreboard", "sleeping",     "tex_throttle", "wait"};
  return r;
}

std::vector<std::string> profile_metrics() {
  std::vector<std::string> m = {kTensor, kDram, kL2, kOccupancy, kDuration};
  for (const auto& r : stall_reasons()) m.push_back(stall_metric(r));
  return m;
}

std::vector<std::string> ncu_command(const NcuOptions& opt, const std::vector<std::string>& target) {
  std::vector<std::string> a = {opt.ncu, "--csv", "--page", "raw"};
  const auto metrics = opt.metrics.empty() ? profile_metrics() : opt.metrics;
  std::string list;
  for (const auto& m : metrics) list += (list.empty() ? "" : ",") + m;
  a.insert(a.end(), {"--metrics", list});
  if (opt.all_processes) a.insert(a.end(), {"--target-processes", "all"});
  if (!opt.clock_control.empty()) a.insert(a.end(), {"--clock-control", opt.clock_control});
  if (!opt.kernel_regex.empty()) a.insert(a.end(), {"--kernel-name", "regex:" + opt.kernel_regex});
  if (opt.launch_skip > 0) a.insert(a.end(), {"--launch-skip", std::to_string(opt.launch_skip)});
  if (opt.launch_count > 0) a.insert(a.end(), {"--launch-count", std::to_string(opt.launch_count)});
  a.push_back("--");
  a.insert(a.end(), target.begin(), target.end());
  return a;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& s : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !s.empty() && s.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += s;
    } else {
      out += '\'';
      for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

std::vector<KernelProfile> parse_ncu_csv(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header, units;
  std::vector<KernelProfile> out;
  int id_col = -1, name_col = -1;
  while (std::getline(in, line)) {
    if (header.empty()) {
      if (line.rfind("\"ID\"", 0) != 0) continue;  // ==PROF== lines, program output
      header = split_csv(line);
      for (size_t i = 0; i < header.size(); ++i) {
        if (header[i] == "ID") id_col = int(i);
        if (header[i] == "Kernel Name") name_col = int(i);
      }
      continue;
    }
    if (line.empty() || line.rfind("==", 0) == 0) continue;
    auto f = split_csv(line);
    if (units.empty() && id_col >= 0 && size_t(id_col) < f.size() && f[id_col].empty()) {
      units = f;  // the units row: its ID field is empty
      continue;
    }
    KernelProfile k;
    if (id_col >= 0 && size_t(id_col) < f.size()) k.id = f[id_col];
    if (name_col >= 0 && size_t(name_col) < f.size()) k.kernel = f[name_col];
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) {
      const auto& h = header[i];
      if (h.find("__") == std::string::npos) continue;  // the identification columns
      if (auto v = number(f[i])) {
        k.metrics[h] = *v;
        if (i < units.size()) k.units[h] = units[i];
      }
    }
    out.push_back(std::move(k));
  }
  if (header.empty()) throw std::runtime_error("ncu output has no CSV header (\"ID\",...): did ncu run?");
  return out;
}

ProfileSummary summarize(const KernelProfile& k, int top) {
  ProfileSummary s;
  auto put = [&](const char* metric, const char* name, double scale = 1) {
    auto it = k.metrics.find(metric);
    if (it != k.metrics.end()) s.metrics[name] = it->second * scale;
  };
  put(kTensor, "tensor_pipe_pct");
  put(kDram, "dram_pct");
  put(kL2, "l2_pct");
  put(kOccupancy, "achieved_occupancy_pct");
  {
    auto it = k.metrics.find(kDuration);
    if (it != k.metrics.end()) {
      const auto u = k.units.count(kDuration) ? k.units.at(kDuration) : std::string("nsecond");
      const double scale = u == "usecond" ? 1 : u == "msecond" ? 1e3 : u == "second" ? 1e6 : 1e-3;
      s.metrics["duration_us"] = it->second * scale;
    }
  }
  double total = 0;
  std::vector<std::pair<std::string, double>> stalls;
  for (const auto& r : stall_reasons()) {
    if (r == "selected") continue;  // issuing, not a stall
    auto it = k.metrics.find(stall_metric(r));
    if (it == k.metrics.end() || it->second <= 0) continue;
    stalls.emplace_back(r, it->second), total += it->second;
  }
  std::sort(stalls.begin(), stalls.end(), [](auto& a, auto& b) { return a.second > b.second; });
  for (int i = 0; i < int(stalls.size()) && i < top; ++i)
    s.top_stalls.emplace_back(stalls[i].first, stalls[i].second / total);
  return s;
}

std::optional<KernelProfile> pick_kernel(const std::vector<KernelProfile>& ks,
                                         const std::vector<std::string>& exclude) {
  std::optional<KernelProfile> best;
  double best_t = -1;
  for (const auto& k : ks) {
    bool skip = false;
    for (const auto& e : exclude) skip = skip || (!e.empty() && k.kernel.find(e) != std::string::npos);
    if (skip) continue;
    auto it = k.metrics.find(kDuration);
    const double t = it == k.metrics.end() ? 0 : it->second;
    if (!best || t > best_t) best = k, best_t = t;
  }
  return best;
}

}  // namespace cudal2::llm

// ---- the observer step (GPU) -------------------------------------------------------------
#include <sys/wait.h>

#include <cctype>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "llm/records.hpp"

namespace cudal2::llm {

std::vector<std::string> profile_target(const ProfileRequest& r) {
  const std::string shape = std::to_string(r.m) + "," + std::to_string(r.n) + "," + std::to_string(r.k);
  // No baselines; unconfined, so that ncu can follow the runner (profile.hpp).
  std::vector<std::string> a = {r.cudal2_exe, "eval", "--source", r.source_path, "--layout", r.layout};
  a.insert(a.end(), {"--accum", r.accum, "--shape", shape, "--timers", "eager", "--reps", "3", "--mode", "offline"});
  a.insert(a.end(), {"--baselines", "", "--no-confine", "--db", r.db_path + ".profile.db"});
  return a;
}

const std::vector<std::string>& profile_excluded_kernels() {
  static const std::vector<std::string> k = {"band_kernel",
                                             "checksum_kernel",
                                             "compare_kernel",
                                             "fill_binary_kernel",
                                             "fill_normal_kernel",
                                             "fill_u16_kernel",
                                             "fill_uniform_kernel",
                                             "gather_kernel",
                                             "cudal2_chain_inputs",
                                             "cudal2_chain_interlude",
                                             "scan_kernel",
                                             "spin_kernel",
                                             "transpose_kernel",
                                             "cublas",
                                             "cutlass",
                                             "xmma",
                                             "gemv",
                                             "splitKreduce"};
  return k;
}

namespace {

// The line of ncu's output that says why it could not profile ("==ERROR== ..." or a "==PROF=="
// line naming the failure), else "".
std::string ncu_error_line(const std::string& out) {
  std::istringstream in(out);
  std::string line, prof;
  while (std::getline(in, line)) {
    if (line.rfind("==ERROR==", 0) == 0) return line;
    if (prof.empty() && line.rfind("==PROF==", 0) == 0 &&
        (line.find("Failed") != std::string::npos || line.find("LibraryNotLoaded") != std::string::npos))
      prof = line;
  }
  return prof;
}

}  // namespace

std::optional<ProfileRow> profile_candidate(const ProfileRequest& r, std::string& why, bool* ncu_unusable) {
  bool unusable_dummy = false;
  bool& unusable = ncu_unusable ? *ncu_unusable : unusable_dummy;
  unusable = false;
  const auto argv = ncu_command(r.ncu, profile_target(r));
  std::string cmd = shell_join(argv);
  if (r.timeout_s > 0) cmd = fmt::format("timeout --kill-after=10 {:.0f} {}", std::ceil(r.timeout_s), cmd);
  cmd += " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    why = "cannot start: " + cmd;
    unusable = true;
    return std::nullopt;
  }
  std::string out;
  char buf[65536];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  const int st = ::pclose(p);
  const int rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::vector<KernelProfile> ks;
  try {
    ks = parse_ncu_csv(out);
  } catch (const std::exception& e) {
    unusable = true;
    if (rc == 127) {
      why = fmt::format("cannot run '{}' (not found)", r.ncu.ncu);
    } else if (r.timeout_s > 0 && (rc == 124 || rc == 137 || rc == -1)) {
      why = fmt::format("ncu did not finish within {:.0f} s", std::ceil(r.timeout_s));
    } else if (const auto line = ncu_error_line(out); !line.empty()) {
      why = fmt::format("ncu failed (exit {}): {}", rc, line);
    } else {
      why = fmt::format("{} (exit {}): {}", e.what(), rc, out.substr(0, 400));
    }
    return std::nullopt;
  }
  const auto k = pick_kernel(ks, profile_excluded_kernels());
  if (!k) {
    why = fmt::format("ncu profiled no launch of the candidate's kernels ({} launch(es) of other kernels)", ks.size());
    return std::nullopt;
  }
  const auto s = summarize(*k);
  ProfileRow row;
  row.spec_hash = r.spec_hash, row.gpu = r.gpu, row.dtype = r.accum, row.layout = r.layout;
  row.m = r.m, row.n = r.n, row.k = r.k;
  row.metrics_json = nlohmann::json(s.metrics).dump();
  row.stalls_json = nlohmann::json(s.top_stalls).dump();
  row.command = shell_join(argv);
  Records rec(r.db_path);
  row.id = rec.put_profile(row);
  return row;
}

std::vector<std::string> kernel_names(const std::string& source) {
  std::vector<std::string> out;
  const std::string kw = "__global__";
  auto ident_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = source.find(kw); at != std::string::npos; at = source.find(kw, at + kw.size())) {
    if ((at > 0 && ident_char(source[at - 1])) ||
        (at + kw.size() < source.size() && ident_char(source[at + kw.size()])))
      continue;  // part of a longer name
    // The last identifier before the parameter list's '(' is the name; attributes such as
    // __launch_bounds__(...) and template arguments are passed over.
    std::string last;
    size_t i = at + kw.size();
    int angle = 0;
    while (i < source.size()) {
      const char c = source[i];
      if (c == ';' || c == '{' || c == '}') break;
      if (ident_char(c)) {
        const size_t b = i;
        while (i < source.size() && ident_char(source[i])) ++i;
        if (angle == 0) last = source.substr(b, i - b);
        continue;
      }
      if (c == '<') ++angle;
      if (c == '>' && angle > 0) --angle;
      if (c == '(' && angle == 0) {
        if (last.rfind("__", 0) == 0 && last.size() > 4 && last.compare(last.size() - 2, 2, "__") == 0) {
          // an attribute's arguments: skip to the matching ')'
          int depth = 0;
          for (; i < source.size(); ++i) {
            if (source[i] == '(') ++depth;
            if (source[i] == ')' && --depth == 0) break;
          }
          last.clear();
          ++i;
          continue;
        }
        if (!last.empty() && !std::isdigit(static_cast<unsigned char>(last[0])) &&
            std::find(out.begin(), out.end(), last) == out.end())
          out.push_back(last);
        break;
      }
      ++i;
    }
  }
  return out;
}

std::string kernel_name_regex(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string alt;
  for (const auto& n : names) alt += (alt.empty() ? "" : "|") + n;
  return "^(.*[ :])?(" + alt + ")([<(].*)?$";
}

}  // namespace cudal2::llm
