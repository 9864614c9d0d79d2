// The profiler observer (`tune --search llm --profile`) without a GPU: ncu is a shell script that
// logs its arguments and prints a canned `--csv --page raw` page (values chosen per candidate by a
// marker in the source file it is handed), so what is tested is everything around ncu: the
// options, when a candidate is profiled, the command, storage in `profiles`, the next prompt, and
// that a missing ncu costs one warning and nothing else. The end-to-end tests run the real
// `cudal2 tune` binary against a scripted model server and a scripted judge (timings chosen per
// candidate by a string compiled into its shared object); they compile the model's kernels with
// nvcc and skip where there is none.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "llm/policy.hpp"
#include "llm/profile.hpp"
#include "llm/records.hpp"
#include "llm_test_server.hpp"
#include "run_command.hpp"
#include "store/sqlite.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace cudal2;
using namespace cudal2::llm;
using cudal2::testing::ScriptedServer;
using cudal2::testing::Step;

namespace {

using cudal2::testing::TempDir;

// A correct free-form kernel; the tag lands in cudal2_describe's string, so it is in the shared
// object the scripted judge reads ("FAST": 5 us, "SLOWER": 20 us, else 10 us) and in the source
// file the fake ncu reads ("FAST": tensor pipe 71.5%, else 33.25%).
std::string kernel(const std::string& tag) {
  return std::string(R"(#include <cuda_fp16.h>
#include "cudal2_kernel_abi.h"
__global__ void __launch_bounds__(256) gemm(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k) {
  int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y, j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= m || j >= n) return;
  float acc = 0.f;
  for (int64_t p = 0; p < k; ++p) acc += __half2float(A[i * k + p]) * __half2float(B[p * n + j]);
  C[i * n + j] = __float2half(acc);
}
extern "C" int cudal2_abi_version(void) { return CUDAL2_KERNEL_ABI_VERSION; }
extern "C" const char* cudal2_describe(void) { return "profile test kernel )") +
         tag + R"("; }
extern "C" int cudal2_can_implement(const cudal2_gemm_args*, char*, size_t) { return 0; }
extern "C" size_t cudal2_workspace_size(const cudal2_gemm_args*) { return 0; }
extern "C" int cudal2_run(const cudal2_gemm_args* a, void* stream, char*, size_t) {
  dim3 block(16, 16), grid((a->n + 15) / 16, (a->m + 15) / 16);
  gemm<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const __half*>(a->A),
      static_cast<const __half*>(a->B), static_cast<__half*>(a->C), a->m, a->n, a->k);
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
)";
}

std::string fenced(const std::string& src) { return "Here is the kernel.\n\n```cuda\n" + src + "```\n"; }

// A fake ncu: appends its command line to `log`, then prints what ncu --csv --page raw prints for
// two launches, a judge's fill (longer, to be left out by name) and the candidate's `gemm`.
std::string write_fake_ncu(const TempDir& dir, const std::string& name, const std::string& log,
                           const std::string& extra_line = "", int sleep_s = 0) {
  const std::string path = dir / name;
  std::ofstream f(path);
  f << "#!/bin/sh\n"
    << "echo \"$@\" >> '" << log << "'\n"
    << (sleep_s > 0 ? "sleep " + std::to_string(sleep_s) + "\n" : "") << "src=''; prev=''\n"
    << "for a in \"$@\"; do [ \"$prev\" = --source ] && src=\"$a\"; prev=\"$a\"; done\n"
    << "t=33.25\n"
    << "if [ -n \"$src\" ] && grep -q FAST \"$src\"; then t=71.5; fi\n"
    << (extra_line.empty() ? "" : "echo '" + extra_line + "'\nexit 1\n") << "cat <<EOF\n"
    << "==PROF== Connected to process 4242 (cudal2)\n"
    << R"csv("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",)csv"
    << R"csv("dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum",)csv"
    << R"csv("lts__throughput.avg.pct_of_peak_sustained_elapsed",)csv"
    << R"csv("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",)csv"
    << R"csv("sm__warps_active.avg.pct_of_peak_sustained_active",)csv"
    << R"csv("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",)csv"
    << R"csv("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio")csv"
    << "\n"
    << R"csv("","","","","","","","","","","","%","usecond","%","%","%","ratio","ratio")csv"
    << "\n"
    << R"csv("0","4242","cudal2","h","fill_normal_kernel(unsigned short *, long, unsigned long)","1","7","(256, 1, 1)",)csv"
    << R"csv("(64, 1, 1)","0","9.0","80","900","50","0","90","1","1")csv"
    << "\n"
    << R"csv("1","4242","cudal2","h","gemm(const __half *, const __half *, __half *, long, long, long)","1","7",)csv"
    << R"csv("(16, 16, 1)","(8, 16, 1)","0","9.0","12.5","41.5","60","$t","55.5","3","1")csv"
    << "\n"
    << "==PROF== Disconnected from process 4242\n"
    << "EOF\n";
  f.close();
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::int64_t profile_rows(const std::string& db) {
  store::sql::Db d(db);
  store::sql::Stmt s(d, "SELECT count(*) FROM profiles");
  return s.step() ? s.int64(0) : -1;
}

bool have_nvcc() {
  std::error_code ec;
  return fs::exists("/usr/local/cuda/bin/nvcc", ec) || std::system("command -v nvcc >/dev/null 2>&1") == 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TEST(LlmProfileConfig, OptionsParsedAndBadValuesRefused) {
  std::map<std::string, std::string> extra = {{"llm-url", "http://127.0.0.1:1/v1"}, {"llm-model", "m"}, {"db", "x.db"}};
  auto c = llm_config_from(extra);
  EXPECT_EQ(c.profile, "off");
  EXPECT_EQ(c.profile_ncu, "ncu");
  EXPECT_GT(c.profile_timeout_s, 0);
  extra["profile"] = "best", extra["profile-ncu"] = "/opt/ncu/ncu", extra["profile-timeout"] = "90";
  c = llm_config_from(extra);
  EXPECT_EQ(c.profile, "best");
  EXPECT_EQ(c.profile_ncu, "/opt/ncu/ncu");
  EXPECT_DOUBLE_EQ(c.profile_timeout_s, 90);
  extra["profile"] = "all";
  EXPECT_EQ(llm_config_from(extra).profile, "all");
  auto refused = [&](const std::string& key, const std::string& value, const std::string& words) {
    auto e = extra;
    e[key] = value;
    try {
      llm_config_from(e);
      ADD_FAILURE() << key << "=" << value << " was accepted";
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find(words), std::string::npos) << err.what();
    }
  };
  refused("profile", "sometimes", "--profile 'sometimes': expected best");
  refused("profile-timeout", "0", "--profile-timeout '0'");
  refused("profile-timeout", "soon", "--profile-timeout 'soon'");
  refused("profile-ncu", "", "--profile-ncu");
  refused("db", "", "--profile needs the store");
}

TEST(LlmProfileKernelNames, FoundInTheSourceForNcusFilter) {
  EXPECT_EQ(kernel_names(kernel("x")), std::vector<std::string>{"gemm"});
  const std::string src = R"(
template <int N> __global__ void tiled(const float* a) {}
extern "C" __global__ void __launch_bounds__(128, 2) reduce_k(float* x);
static __global__ void
    other_one (int);
__device__ void not_a_kernel(int);
int my__global__thing(int);
__global__ void tiled(const float* a);
)";
  EXPECT_EQ(kernel_names(src), (std::vector<std::string>{"tiled", "reduce_k", "other_one"}));
  EXPECT_TRUE(kernel_names("CUDAL2_EXPORT_KERNEL_ABI(k, \"mma\")").empty());
  EXPECT_EQ(kernel_name_regex({}), "");
  EXPECT_EQ(kernel_name_regex({"a", "b_2"}), "^(.*[ :])?(a|b_2)([<(].*)?$");
}

// profile_candidate with the fake ncu: the row it stores, and how it fails.
TEST(LlmProfileCandidate, StoresTheSummaryOrSaysWhyNot) {
  TempDir dir;
  const std::string log = dir / "ncu.log";
  ProfileRequest r;
  r.db_path = dir / "p.db", r.cudal2_exe = "/opt/cudal2/bin/cudal2", r.source_path = dir / "k.cu";
  r.spec_hash = "0123456789abcdef", r.gpu = "NVIDIA H100", r.layout = "tn", r.accum = "f16";
  r.m = 128, r.n = 256, r.k = 64;
  std::ofstream(r.source_path) << kernel("FAST");
  r.ncu.ncu = write_fake_ncu(dir, "ncu", log);
  r.ncu.kernel_regex = kernel_name_regex(kernel_names(kernel("FAST")));
  std::string why;
  bool unusable = true;
  const auto row = profile_candidate(r, why, &unusable);
  ASSERT_TRUE(row) << why;
  EXPECT_FALSE(unusable);
  const auto m = nlohmann::json::parse(row->metrics_json);
  EXPECT_EQ(m["tensor_pipe_pct"], 71.5);
  EXPECT_EQ(m["duration_us"], 41.5);  // the candidate's launch, not the longer fill
  EXPECT_EQ(nlohmann::json::parse(row->stalls_json)[0][0], "long_scoreboard");
  const auto got = Records(r.db_path).latest_profile(r.spec_hash, 128, 256, 64);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gpu, "NVIDIA H100");
  EXPECT_EQ(got->layout, "tn");
  EXPECT_EQ(got->dtype, "f16");
  // The command ncu got: the candidate's kernels, followed into the unconfined runner.
  const auto args = slurp(log);
  EXPECT_NE(args.find("--csv --page raw --metrics "), std::string::npos) << args;
  EXPECT_NE(args.find("--kernel-name regex:^(.*[ :])?(gemm)([<(].*)?$"), std::string::npos) << args;
  EXPECT_NE(args.find("-- /opt/cudal2/bin/cudal2 eval --source " + r.source_path +
                      " --layout tn --accum f16 --shape 128,256,64 --timers eager --reps 3 --mode offline --baselines "
                      " --no-confine --db " +
                      r.db_path + ".profile.db"),
            std::string::npos)
      << args;
  EXPECT_NE(got->command.find("--baselines '' --no-confine"), std::string::npos) << got->command;

  // ncu missing: said so, and ncu counts as unusable.
  r.ncu.ncu = dir / "no-such-ncu";
  EXPECT_FALSE(profile_candidate(r, why, &unusable));
  EXPECT_TRUE(unusable);
  EXPECT_NE(why.find("cannot run '" + r.ncu.ncu + "' (not found)"), std::string::npos) << why;
  // ncu that cannot read the counters (what the device machines' gVisor runtime answers).
  r.ncu.ncu = write_fake_ncu(dir, "ncu-refused", dir / "refused.log",
                             "==ERROR== Failed to initialize the profiler: LibraryNotLoaded");
  EXPECT_FALSE(profile_candidate(r, why, &unusable));
  EXPECT_TRUE(unusable);
  EXPECT_NE(why.find("LibraryNotLoaded"), std::string::npos) << why;
  // Past the timeout.
  r.ncu.ncu = write_fake_ncu(dir, "ncu-slow", dir / "slow.log", "", 5);
  r.timeout_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(profile_candidate(r, why, &unusable));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 4.5);
  EXPECT_TRUE(unusable);
  EXPECT_NE(why.find("did not finish within 1 s"), std::string::npos) << why;
  // ncu ran, but no launch of the candidate: this candidate's failure, not ncu's.
  r.timeout_s = 0;
  r.ncu.ncu = write_fake_ncu(dir, "ncu", log);
  std::ofstream(dir / "only_fill.sh") << "#!/bin/sh\n" << r.ncu.ncu << " \"$@\" | grep -v gemm\n";
  fs::permissions(dir / "only_fill.sh", fs::perms::owner_all);
  r.ncu.ncu = dir / "only_fill.sh";
  EXPECT_FALSE(profile_candidate(r, why, &unusable));
  EXPECT_FALSE(unusable);
  EXPECT_NE(why.find("no launch of the candidate"), std::string::npos) << why;
  EXPECT_EQ(profile_rows(r.db_path), 1);
}

// ---------------------------------------------------------------------------------------------
// `cudal2 tune --search llm --profile ...` end to end, on one shape (so two problems, NN and TN),
// one candidate a round, four candidates. The loop runs (tune.cpp's merge):
//   round 1: model call 1 (NN) -> A, measured (10 us); call 2 (TN) -> B waits
//   round 2: call 3 (NN) -> C waits; B measured (10 us)
//   round 3: call 4 (TN) -> D waits; C measured (FAST: 5 us, NN's new best)
//   round 4: call 5 (NN) -> E waits; D measured (SLOWER: 20 us, not TN's best)
namespace {

struct TuneRun {
  int code = -1;
  std::string output;
  std::vector<nlohmann::json> requests;
};

const char* kJudge = R"(#!/usr/bin/env python3
import json, sys
def median(c):
    try:
        so = open(c["artifact"], "rb").read()
    except Exception:
        so = b""
    return 5.0 if b"FAST" in so else 20.0 if b"SLOWER" in so else 10.0
for line in sys.stdin:
    req = json.loads(line)
    shapes = []
    for m, n, k in req["shapes"]:
        ms = [{"method": c["name"], "status": "ok", "failure": "", "reason": "", "rel_err": 1e-4,
               "timing": {"offline": {"graph": {"median": median(c), "p10": median(c), "p90": median(c),
                                                "min": median(c), "n": 5}}}}
              for c in req["candidates"]]
        ms += [{"method": b, "status": "ok", "failure": "", "reason": "", "rel_err": None,
                "timing": {"offline": {"graph": {"median": 12.0, "p10": 12.0, "p90": 12.0, "min": 12.0, "n": 5}}}}
               for b in req["baselines"]]
        shapes.append({"m": m, "n": n, "k": k, "methods": ms})
    print(json.dumps({"ok": True, "gpu": "unknown", "shapes": shapes}), flush=True)
)";

std::vector<std::string> sources() {
  return {kernel("slow A"), kernel("slow B"), kernel("FAST C"), kernel("SLOWER D"), kernel("slow E"), kernel("slow F")};
}

TuneRun tune(const TempDir& dir, const std::string& db, const std::string& profile_args) {
  const std::string judge = dir / "judge.py";
  if (!fs::exists(judge)) {
    std::ofstream(judge) << kJudge;
    fs::permissions(judge, fs::perms::owner_all);
  }
  std::vector<Step> steps;
  for (const auto& s : sources()) steps.push_back(Step{200, fenced(s)});
  ScriptedServer srv(steps);
  const std::string cmd =
      std::string(CUDAL2_CLI) + " tune --search llm --llm-url " + srv.url() + " --llm-model scripted --db " + db +
      " --judge " + judge +
      " --no-gpu-check --shape 64,64,64 --families tiny --timers graph --baselines cublas-nn --round 1 --budget 4 " +
      profile_args + " 2>&1";
  TuneRun r;
  const auto out = test_util::run_command(cmd);
  r.code = out.code, r.output = out.output, r.requests = srv.requests();
  return r;
}

std::string prompt_of(const nlohmann::json& request) {
  return request["messages"].back()["content"].get<std::string>();
}

std::string hash_of(int i, Layout l) { return free_spec_hash(sources().at(i), l, Accum::F32); }

}  // namespace

TEST(LlmProfileTune, TheNewBestIsProfiledAndTheNextPromptShowsIt) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc: tune compiles the model's kernels";
  TempDir dir;
  const std::string db = dir / "tune.db", log = dir / "ncu.log";
  const std::string ncu = write_fake_ncu(dir, "ncu", log);
  // `--profile` alone means best.
  const auto r = tune(dir, db, "--profile --profile-ncu " + ncu + " --profile-timeout 120");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("warning: --profile"), std::string::npos) << r.output;
  ASSERT_EQ(r.requests.size(), 5u) << r.output;

  // Every candidate measured; the three that were (or became) their problem's best are profiled.
  Records rec(db);
  int ok = 0;
  for (const auto& t : rec.turns()) ok += t.status == "ok";
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(profile_rows(db), 3);
  const auto a = rec.latest_profile(hash_of(0, Layout::NN), 64, 64, 64);
  const auto b = rec.latest_profile(hash_of(1, Layout::TN), 64, 64, 64);
  const auto c = rec.latest_profile(hash_of(2, Layout::NN), 64, 64, 64);
  ASSERT_TRUE(a && b && c);
  EXPECT_FALSE(rec.latest_profile(hash_of(3, Layout::TN), 64, 64, 64));  // 20 us: not TN's best
  EXPECT_EQ(nlohmann::json::parse(a->metrics_json)["tensor_pipe_pct"], 33.25);
  EXPECT_EQ(nlohmann::json::parse(c->metrics_json)["tensor_pipe_pct"], 71.5);
  EXPECT_EQ(nlohmann::json::parse(c->metrics_json)["achieved_occupancy_pct"], 55.5);
  EXPECT_EQ(c->gpu, "unknown");  // the scripted judge's GPU, as the store names it
  EXPECT_EQ(c->layout, "nn");
  EXPECT_EQ(b->layout, "tn");

  // ncu ran three times, on this cudal2 and the candidate's source kept beside the store.
  const auto args = slurp(log);
  EXPECT_EQ(count_of(args, " eval --source "), 3) << args;
  EXPECT_NE(args.find(std::string(CUDAL2_CLI) + " eval --source " + db + ".profile.d/" + hash_of(2, Layout::NN) +
                      ".cu --layout nn --accum f32 --shape 64,64,64"),
            std::string::npos)
      << args;
  EXPECT_EQ(slurp(db + ".profile.d/" + hash_of(2, Layout::NN) + ".cu"), sources()[2]);
  EXPECT_NE(args.find("--no-confine"), std::string::npos);
  EXPECT_NE(args.find("--clock-control none"), std::string::npos);

  // The prompts: none before a profile exists; then the best kernel's metrics.
  EXPECT_EQ(prompt_of(r.requests[0]).find("Nsight Compute profile"), std::string::npos);
  EXPECT_EQ(prompt_of(r.requests[1]).find("Nsight Compute profile"), std::string::npos);
  for (int i : {2, 3}) {  // NN after A, TN after B
    const auto p = prompt_of(r.requests[i]);
    EXPECT_NE(p.find("Its Nsight Compute profile"), std::string::npos) << p;
    EXPECT_NE(p.find("tensor_pipe_pct: 33.25"), std::string::npos) << p;
    EXPECT_NE(p.find("long_scoreboard 75.0%; barrier 25.0%"), std::string::npos) << p;
  }
  EXPECT_NE(prompt_of(r.requests[3]).find("column-major"), std::string::npos);  // call 4 is TN's
  const auto p5 = prompt_of(r.requests[4]);                                     // NN after C, the new best
  EXPECT_NE(p5.find("FAST C"), std::string::npos);
  EXPECT_NE(p5.find("tensor_pipe_pct: 71.5"), std::string::npos) << p5;
  EXPECT_NE(p5.find("dram_pct: 12.5"), std::string::npos) << p5;
}

TEST(LlmProfileTune, MissingNcuWarnsOnceAndTheTuningGoesOn) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc: tune compiles the model's kernels";
  TempDir dir;
  const std::string db = dir / "tune.db", missing = dir / "no-such-dir/ncu";
  const auto r = tune(dir, db, "--profile best --profile-ncu " + missing);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "warning: --profile"), 1) << r.output;
  const size_t at = r.output.find("cudal2: llm: warning: --profile");
  if (at != std::string::npos)
    std::printf("the warning:\n%s\n", r.output.substr(at, r.output.find('\n', at) - at).c_str());
  EXPECT_NE(r.output.find("cannot run '" + missing + "' (not found)"), std::string::npos) << r.output;
  EXPECT_EQ(r.requests.size(), 5u);
  int ok = 0;
  for (const auto& t : Records(db).turns()) ok += t.status == "ok";
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(profile_rows(db), 0);
  for (const auto& q : r.requests) EXPECT_EQ(prompt_of(q).find("Nsight Compute profile"), std::string::npos);
}

TEST(LlmProfileTune, OffRunsNoNcuAndAllProfilesEveryCandidate) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc: tune compiles the model's kernels";
  TempDir dir;
  const std::string log_off = dir / "off.log", log_all = dir / "all.log";
  auto r = tune(dir, dir / "off.db", "--profile off --profile-ncu " + write_fake_ncu(dir, "ncu-off", log_off));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(log_off));
  EXPECT_EQ(profile_rows(dir / "off.db"), 0);
  r = tune(dir, dir / "none.db", "--profile-ncu " + write_fake_ncu(dir, "ncu-default", log_off));  // off by default
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(log_off));

  r = tune(dir, dir / "all.db", "--profile all --profile-ncu " + write_fake_ncu(dir, "ncu-all", log_all));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(profile_rows(dir / "all.db"), 4);
  EXPECT_EQ(count_of(slurp(log_all), " eval --source "), 4);
  EXPECT_TRUE(Records(dir / "all.db").latest_profile(hash_of(3, Layout::TN), 64, 64, 64));

  // A bad value stops the command before anything runs.
  const auto bad = test_util::run_command(
      std::string(CUDAL2_CLI) + " tune --search llm --llm-url http://127.0.0.1:9/v1 --llm-model m --db " +
      (dir / "bad.db").string() + " --no-gpu-check --shape 64,64,64 --profile often 2>&1");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("--profile 'often': expected best"), std::string::npos) << bad.output;
}
