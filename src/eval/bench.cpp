#include "eval/bench.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include "baselines/baselines.hpp"
#include "core/csv.hpp"
#include "eval/chain_check.hpp"
#include "eval/checks.hpp"
#include "eval/device.hpp"
#include "eval/interlude.hpp"

namespace cudal2 {

namespace {

using Clock = std::chrono::steady_clock;

struct StreamHolder {
  cudaStream_t s = nullptr;
  StreamHolder() { CUDAL2_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~StreamHolder() { cudaStreamDestroy(s); }
};

// Outputs a chained batch keeps besides C (eval/interlude.hpp): as many as fit this many bytes,
// at least one, so a batch holds at most that many calls plus one.
constexpr size_t kSlotBytes = size_t{1} << 30;
int slot_count(const Shape& s) {
  return static_cast<int>(std::clamp<size_t>(kSlotBytes / (static_cast<size_t>(s.m * s.n) * 2), 1, 999));
}

// Operands of one shape: A, B in both layouts (same values), C and the library workspace, each
// inside guard bands; with chains, the slots that keep a batch's outputs and the seed word.
struct ShapeBuffers {
  Shape shape;
  GuardedBuffer A, Bn, Bt, C, W, slots, seed;
  ShapeBuffers(const Shape& s, bool chains)
      : shape(s),
        A(static_cast<size_t>(s.m * s.k) * 2),
        Bn(static_cast<size_t>(s.k * s.n) * 2),
        Bt(static_cast<size_t>(s.k * s.n) * 2),
        C(static_cast<size_t>(s.m * s.n) * 2),
        W(kLibraryWorkspace) {
    if (chains) {
      slots = GuardedBuffer(static_cast<size_t>(slot_count(s)) * static_cast<size_t>(s.m * s.n) * 2);
      seed = GuardedBuffer(sizeof(unsigned long long), 256);
      set_seed(0, nullptr);
    }
  }
  // Calls a chained batch may hold: one per slot, and the last in C.
  int chain_capacity() const { return slots.data() ? static_cast<int>(slots.bytes() / C.bytes()) + 1 : 0; }
  std::optional<InterludeArgs> interlude(Layout l) const {
    if (!seed.data()) return std::nullopt;
    InterludeArgs a;
    a.A = A.data(), a.B = l == Layout::NN ? Bn.data() : Bt.data(), a.C = C.data(), a.slots = slots.data();
    a.m = shape.m, a.n = shape.n, a.k = shape.k, a.b_col_major = l == Layout::TN;
    a.seed = static_cast<const unsigned long long*>(seed.data());
    return a;
  }
  void set_seed(unsigned long long v, cudaStream_t st) {
    CUDAL2_CUDA(cudaMemcpyAsync(seed.data(), &v, sizeof v, cudaMemcpyHostToDevice, st));
    CUDAL2_CUDA(cudaStreamSynchronize(st));
  }
  Operands operands(Layout l) const {
    Operands o{A.data(), l == Layout::NN ? Bn.data() : Bt.data(), C.data(), W.data(), W.bytes()};
    o.bufA = &A, o.bufB = l == Layout::NN ? &Bn : &Bt, o.bufC = &C;
    return o;
  }
  // Inputs drawn from d (fresh values from seed), B in both layouts.
  void fill_from(const InputDistribution& d, uint64_t seed, cudaStream_t st) {
    if (d.kind == InputDistribution::Kind::Binary) {
      fill(true, seed, st);
      return;
    }
    const double g = d.sigma_scale(shape.k);
    auto one = [&](GuardedBuffer& b, double mean, double sigma, uint64_t sd) {
      if (d.kind == InputDistribution::Kind::Normal)
        fill_normal_f16(b.data(), b.bytes() / 2, sd, st, static_cast<float>(mean), static_cast<float>(sigma * g));
      else
        fill_uniform_f16(b.data(), b.bytes() / 2, sd, static_cast<float>(mean - sigma * g),
                         static_cast<float>(mean + sigma * g), st);
    };
    one(A, d.a_mean, d.a_sigma, seed);
    one(Bn, d.b_mean, d.b_sigma, seed ^ 0x5bd1e995ull);
    transpose_f16(Bn.data(), Bt.data(), shape.k, shape.n, st);
  }
  // B is generated row-major and transposed, so NN and TN runners see identical values.
  void fill(bool binary, uint64_t seed, cudaStream_t st) {
    const int ones_every = std::max({shape.m, shape.n, shape.k}) > 8192 ? 3 : 2;
    if (binary) {
      fill_binary_f16(A.data(), A.bytes() / 2, seed, ones_every, st);
      fill_binary_f16(Bn.data(), Bn.bytes() / 2, seed ^ 0x5bd1e995ull, ones_every, st);
    } else {
      fill_normal_f16(A.data(), A.bytes() / 2, seed, st);
      fill_normal_f16(Bn.data(), Bn.bytes() / 2, seed ^ 0x5bd1e995ull, st);
    }
    transpose_f16(Bn.data(), Bt.data(), shape.k, shape.n, st);
    CUDAL2_CUDA(cudaStreamSynchronize(st));
  }
  std::vector<GuardedBuffer*> all() {
    std::vector<GuardedBuffer*> v{&A, &Bn, &Bt, &C, &W};
    if (slots.data()) v.push_back(&slots);
    return v;
  }
};

// Run the runner once on poisoned output and apply every check. Failures are recorded in v.
void verify_once(Runner& r, ShapeBuffers& buf, const Reference& ref, bool exact, Accum accum, uint16_t poison,
                 DeviceChecker& chk, cudaStream_t st, Verdict& v) {
  const Shape& s = buf.shape;
  fill_u16(buf.C.data(), buf.C.bytes() / 2, poison, st);
  std::vector<std::pair<std::string, GuardedBuffer*>> guarded{
      {"A", &buf.A}, {"B(nn)", &buf.Bn}, {"B(tn)", &buf.Bt}, {"C", &buf.C}, {"workspace", &buf.W}};
  for (const auto& p : r.private_buffers()) guarded.push_back(p);
  for (auto& [name, b] : guarded) b->reset_guards(st);
  CUDAL2_CUDA(cudaStreamSynchronize(st));
  r.run(st);
  CUDAL2_CUDA(cudaStreamSynchronize(st));
  CUDAL2_CUDA(cudaGetLastError());
  for (auto& [name, b] : guarded) {
    const auto d = b->guard_damage(st);
    if (d.before || d.after)
      v.fail(FailureKind::OutOfBoundsWrite,
             fmt::format("{} guard bands changed: {} bytes before, {} after", name, d.before, d.after));
  }
  // The whole output is scanned in place; only the elements the reference compares come back.
  const auto scan = chk.scan(buf.C.data(), buf.C.bytes() / 2, poison, st);
  const SampledOutput C = chk.gather(buf.C.data(), s, ref.sampling, st);
  if (scan.unwritten)
    v.fail(FailureKind::UnwrittenOutput,
           fmt::format("{} of {} outputs never written (first at row {}, col {})", scan.unwritten, buf.C.bytes() / 2,
                       scan.first_unwritten / s.n, scan.first_unwritten % s.n));
  if (scan.nonfinite)
    v.fail(FailureKind::NanInf, fmt::format("{} outputs are NaN or Inf (first at row {}, col {})", scan.nonfinite,
                                            scan.first_nonfinite / s.n, scan.first_nonfinite % s.n));
  v.sampled = !ref.sampling.full;
  if (exact) {
    const auto ex = compare_exact(s, C, ref);
    v.exact_checked = ex.checked;
    v.exact_mismatches = ex.mismatches;
    if (ex.mismatches)
      v.fail(FailureKind::ExactMismatch,
             fmt::format("{} of {} exact elements differ (first C[{},{}] = {} want {})", ex.mismatches, ex.checked,
                         ex.first_i, ex.first_j, ex.first_got, ex.first_want));
  } else {
    v.rel_err = relative_frobenius(s, C, ref);
    v.tol = normal_tolerance(accum, s.k);
    if (!(v.rel_err <= v.tol))
      v.fail(FailureKind::NormalError,
             fmt::format("relative Frobenius error {:.3g} > tolerance {:.3g}", v.rel_err, v.tol));
  }
}

Reference host_reference(ShapeBuffers& buf, double budget, uint64_t sampling_seed) {
  const auto A = to_host_u16(buf.A.data(), buf.A.bytes() / 2);
  const auto B = to_host_u16(buf.Bn.data(), buf.Bn.bytes() / 2);
  return compute_reference(buf.shape, A, B, plan_sampling(buf.shape, budget, sampling_seed));
}

// The judge's side of one shape for untrusted methods: a cuBLAS reference of the current inputs
// (fp32 accumulation), keyed checksums of the inputs, and the checks after every run.
class Judge {
 public:
  Judge(ShapeBuffers& buf, const JobSecrets& sec, cudaStream_t st)
      : buf_(buf), sec_(sec), st_(st), ref_out_(buf.C.bytes()), ref_(make_baseline("cublas-nn", Accum::F32)) {
    if (buf.seed.data()) chain_ = std::make_unique<ChainChecker>(buf.shape, Accum::F32);
    Operands o = buf.operands(Layout::NN);
    o.C = ref_out_.data();
    ref_->prepare(buf.shape, o, st);
  }
  // New inputs from d, their reference and checksums.
  void fresh_inputs(const InputDistribution& d, uint64_t seed) {
    dist_ = &d, seed_ = seed;
    buf_.fill_from(d, seed, st_);
    ref_->run(st_);
    tol_ = element_tolerance(accum_, buf_.shape.k, d.scale(buf_.shape.k));
    sums_ = checksums();
  }
  // The inputs as they are now are the ones every later check compares with (the classic
  // rounds fill them themselves).
  void snapshot() { sums_ = checksums(); }
  bool inputs_intact() { return checksums() == sums_; }
  void set_accum(Accum a) {
    accum_ = a;
    if (chain_) chain_ = std::make_unique<ChainChecker>(buf_.shape, a);
  }
  // Poisoned output, fresh guard bands: what every untrusted run starts from.
  void arm(Runner& r) {
    fill_u16(buf_.C.data(), buf_.C.bytes() / 2, sec_.poison, st_);
    for (auto* b : buf_.all()) b->reset_guards(st_);
    for (auto& [name, b] : r.private_buffers()) b->reset_guards(st_);
    CUDAL2_CUDA(cudaStreamSynchronize(st_));
  }
  // Before a chained batch: a new secret seed (the batch's inputs), poisoned C and slots, fresh
  // guard bands, and the checksum of the B layout the batch must not touch.
  void arm_chain(Runner& r, unsigned long long seed) {
    seed_value_ = seed;
    buf_.set_seed(seed, st_);
    fill_u16(buf_.slots.data(), buf_.slots.bytes() / 2, sec_.poison, st_);
    arm(r);
    const GuardedBuffer& other = r.layout() == Layout::NN ? buf_.Bt : buf_.Bn;
    other_b_ = chk_.checksum(other.data(), other.bytes(), sec_.checksum_key, st_);
  }
  // After a chained batch of `calls` calls: guard bands, the other B layout, and every call's
  // output against the reference of its own inputs.
  Finding check_chain(Runner& r, int calls) {
    if (Finding f = guards(r)) return f;
    const bool nn = r.layout() == Layout::NN;
    const GuardedBuffer& other = nn ? buf_.Bt : buf_.Bn;
    const GuardedBuffer& mine = nn ? buf_.Bn : buf_.Bt;
    Finding f;
    if (chk_.checksum(other.data(), other.bytes(), sec_.checksum_key, st_) != other_b_)
      f = {FailureKind::InputModified, "the candidate changed an operand it was not given"};
    else
      f = chain_->check(seed_value_, calls, {buf_.C.data(), buf_.slots.data(), buf_.A.data(), mine.data(), !nn},
                        sec_.poison, sec_.checksum_key, chk_, st_);
    // (Every later check of this candidate starts from fresh_inputs or arm_chain again.)
    return f;
  }
  // What the last run did wrong, if anything.
  Finding check(Runner& r) {
    if (Finding f = guards(r)) return f;
    if (checksums() != sums_) {
      // Put them back, or every method after this one would be judged on corrupted inputs.
      if (dist_) fresh_inputs(*dist_, seed_);
      return {FailureKind::InputModified, "the candidate changed its input operands"};
    }
    const auto c = chk_.compare(buf_.C.data(), ref_out_.data(), buf_.C.bytes() / 2, tol_, sec_.poison, st_);
    if (!c.ok()) {
      const int64_t n = buf_.shape.n;
      return {FailureKind::WrongResult,
              fmt::format("against the GPU reference, {} element(s) unwritten, {} NaN/Inf, {} beyond tolerance "
                          "(|c-r| <= {:.3g}|r| + {:.3g}); first C[{},{}] = {} want {}",
                          c.unwritten, c.nonfinite, c.mismatched, tol_.rel, tol_.abs, c.first_bad / n, c.first_bad % n,
                          c.first_got, c.first_want)};
    }
    return {};
  }

 private:
  Finding guards(Runner& r) {
    std::vector<std::pair<std::string, GuardedBuffer*>> guarded{
        {"A", &buf_.A}, {"B(nn)", &buf_.Bn}, {"B(tn)", &buf_.Bt}, {"C", &buf_.C}, {"workspace", &buf_.W}};
    if (buf_.slots.data()) guarded.emplace_back("output slots", &buf_.slots);
    for (const auto& p : r.private_buffers()) guarded.push_back(p);
    for (auto& [name, b] : guarded)
      if (const int64_t d = chk_.guard_damage(*b, st_))
        return {FailureKind::OutOfBounds, fmt::format("{} bytes of the guard bands of {} changed", d, name)};
    return {};
  }
  std::array<uint64_t, 3> checksums() {
    return {chk_.checksum(buf_.A.data(), buf_.A.bytes(), sec_.checksum_key, st_),
            chk_.checksum(buf_.Bn.data(), buf_.Bn.bytes(), sec_.checksum_key, st_),
            chk_.checksum(buf_.Bt.data(), buf_.Bt.bytes(), sec_.checksum_key, st_)};
  }
  ShapeBuffers& buf_;
  const JobSecrets& sec_;
  cudaStream_t st_;
  GuardedBuffer ref_out_;
  RunnerPtr ref_;
  DeviceChecker chk_;
  Accum accum_ = Accum::F32;
  const InputDistribution* dist_ = nullptr;
  uint64_t seed_ = 0;
  ElementTolerance tol_;
  std::array<uint64_t, 3> sums_{};
  std::unique_ptr<ChainChecker> chain_;
  unsigned long long seed_value_ = 0;
  uint64_t other_b_ = 0;
};

std::string fmt_num(double v, int prec = 4) { return fmt::format("{:.{}g}", v, prec); }

std::vector<std::string> csv_rows_for(const ShapeResult& sr, const MethodResult& mr, Mode mode, TimerKind t,
                                      const BenchOptions& opt) {
  const Shape& s = sr.shape;
  std::vector<std::string> f{std::to_string(s.m),
                             std::to_string(s.n),
                             std::to_string(s.k),
                             std::string(to_string(classify(s))),
                             std::string(to_string(opt.accum)),
                             mr.method,
                             std::string(to_string(mr.layout)),
                             std::string(to_string(mode)),
                             std::string(to_string(t))};
  const auto& sum = mr.timing.count(mode) ? mr.timing.at(mode)[static_cast<int>(t)] : std::nullopt;
  Status status = mr.status;
  std::string reason = mr.reason;
  if (mr.status == Status::Ok && !sum) {
    status = Status::NotCapturable;
    reason = mr.graph_error.count(mode) ? mr.graph_error.at(mode) : "";
  }
  if (sum) {
    const auto best = sr.best_baseline(mode, t);
    f.insert(f.end(), {fmt_num(sum->median, 6), fmt_num(sum->p10, 6), fmt_num(sum->p90, 6), fmt_num(sum->min, 6),
                       std::to_string(sum->n), std::to_string(mr.inner.count(mode) ? mr.inner.at(mode) : 1),
                       fmt_num(tflops_at(s, sum->median)), fmt_num(100.0 * roofline_us(s, opt.ceilings) / sum->median),
                       best ? fmt_num(*best / sum->median) : ""});
    const auto paired = sr.paired_ratio(mr, mode, t);
    f.push_back(paired ? fmt_num(*paired) : "");
  } else {
    f.insert(f.end(), 10, "");
  }
  const Verdict& bad = mr.first_failure();
  f.insert(
      f.end(),
      {std::string(to_string(status)), std::string(to_string(bad.failure)), reason.empty() ? bad.detail : reason,
       mr.normal.rel_err >= 0 ? fmt_num(mr.normal.rel_err, 3) : "", fmt_num(mr.normal.tol, 3),
       std::to_string(mr.exact.exact_checked), std::to_string(mr.exact.exact_mismatches), mr.exact.sampled ? "1" : "0",
       std::to_string(sr.sm_mhz_min), std::to_string(sr.sm_mhz_max), std::to_string(sr.seed), mr.details.dump()});
  return f;
}

}  // namespace

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> c{"m",
                                          "n",
                                          "k",
                                          "class",
                                          "accum",
                                          "method",
                                          "layout",
                                          "mode",
                                          "timer",
                                          "median_us",
                                          "p10_us",
                                          "p90_us",
                                          "min_us",
                                          "n_samples",
                                          "inner",
                                          "tflops",
                                          "roofline_pct",
                                          "ratio_to_best_baseline",
                                          "paired_ratio",
                                          "status",
                                          "failure",
                                          "reason",
                                          "rel_err",
                                          "tol",
                                          "exact_checked",
                                          "exact_mismatches",
                                          "sampled",
                                          "sm_mhz_min",
                                          "sm_mhz_max",
                                          "seed",
                                          "details"};
  return c;
}

const MethodResult* ShapeResult::fastest_baseline(Mode m, TimerKind t) const {
  const MethodResult* best = nullptr;
  for (const auto& mr : methods) {
    if (!mr.baseline || mr.status != Status::Ok || !mr.timing.count(m)) continue;
    const auto& s = mr.timing.at(m)[static_cast<int>(t)];
    if (s && (!best || s->median < best->timing.at(m)[static_cast<int>(t)]->median)) best = &mr;
  }
  return best;
}

std::optional<double> ShapeResult::best_baseline(Mode m, TimerKind t) const {
  const MethodResult* best = fastest_baseline(m, t);
  return best ? std::optional<double>(best->timing.at(m)[static_cast<int>(t)]->median) : std::nullopt;
}

std::optional<double> ShapeResult::paired_ratio(const MethodResult& mr, Mode m, TimerKind t) const {
  const MethodResult* best = fastest_baseline(m, t);
  if (!best || !mr.samples.count(m) || !best->samples.count(m)) return std::nullopt;
  const auto& ours = mr.samples.at(m)[static_cast<int>(t)];
  const auto& theirs = best->samples.at(m)[static_cast<int>(t)];
  if (ours.empty() || ours.size() != theirs.size()) return std::nullopt;
  std::vector<double> ratios(ours.size());
  for (size_t r = 0; r < ours.size(); ++r) ratios[r] = theirs[r] / ours[r];
  return percentile(std::move(ratios), 50);
}

size_t bench_bytes(const Shape& s) {
  const size_t g = 2 * GuardedBuffer::kDefaultGuard + 512;
  return static_cast<size_t>(s.m * s.k + 2 * s.k * s.n + s.m * s.n) * 2 + 5 * g + kLibraryWorkspace;
}

size_t chain_bytes(const Shape& s) {
  const size_t mn = static_cast<size_t>(s.m * s.n) * 2;
  const size_t per_call = static_cast<size_t>(s.m * s.k + s.k * s.n) * 2 + mn;
  return static_cast<size_t>(slot_count(s)) * mn + std::max(kChainCheckScratch, per_call) +
         2 * GuardedBuffer::kDefaultGuard;
}

BenchReport run_bench(const BenchOptions& opt) {
  require_gpu();
  CUDAL2_CUDA(cudaSetDevice(0));
  const GpuInfo gpu = query_gpu(0);
  size_t free_b = 0, total_b = 0;
  CUDAL2_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const size_t flush_bytes = 2 * gpu.l2_bytes;
  // With untrusted methods the judge keeps a reference output beside C.
  bool judged = false;
  for (const auto& m : opt.methods) judged = judged || !m.baseline;
  for (const auto& s : opt.shapes) {
    const bool chains = opt.timers[static_cast<int>(TimerKind::Chain)] || (judged && opt.interleave);
    const size_t need = bench_bytes(s) + flush_bytes +
                        (judged ? static_cast<size_t>(s.m * s.n) * 2 + 2 * GuardedBuffer::kDefaultGuard : 0) +
                        (chains ? chain_bytes(s) : 0);
    if (need > free_b)
      throw InputError(fmt::format("problem {} is too big for GPU memory: needs {:.2f} GiB, {:.2f} GiB free on {}",
                                   s.str(), need / 1073741824.0, free_b / 1073741824.0, gpu.name));
  }

  BenchReport report;
  std::vector<Shape> todo = opt.shapes;
  std::unique_ptr<CsvWriter> csv;
  if (!opt.csv_path.empty()) {
    if (opt.resume) {
      std::set<std::string> have;
      try {
        for (const auto& row : read_csv(opt.csv_path))
          have.insert(
              fmt::format("{}x{}x{}|{}|{}", row.at("m"), row.at("n"), row.at("k"), row.at("method"), row.at("mode")));
      } catch (const InputError&) {
        // no file yet: start fresh
      } catch (const std::out_of_range&) {
        throw InputError(fmt::format("'{}' is not a cudal2 bench CSV (missing columns); cannot resume", opt.csv_path));
      }
      std::erase_if(todo, [&](const Shape& s) {
        for (const auto& m : opt.methods)
          for (auto mode : opt.modes)
            if (!have.count(fmt::format("{}|{}|{}", s.str(), m.name, to_string(mode)))) return false;
        return true;
      });
      report.skipped_resumed = static_cast<int>(opt.shapes.size() - todo.size());
    }
    std::vector<std::string> comments{
        fmt::format("cudal2 {}", opt.command_line),
        fmt::format("gpu={} sms={} l2_mb={:.0f} cc={}.{} max_sm_mhz={}", gpu.name, gpu.sm_count, gpu.l2_bytes / 1e6,
                    gpu.cc_major, gpu.cc_minor, gpu.max_sm_clock_mhz),
        fmt::format("driver={} driver_api={} cuda_runtime={} cublas={} cublaslt={}", gpu.driver, gpu.driver_api,
                    gpu.runtime_api, gpu.cublas_version, gpu.cublaslt_version),
        fmt::format("accum={} reps={} qps={} verify_budget_macs={:.3g} roofline={}TFLOP/s,{}TB/s", to_string(opt.accum),
                    opt.reps, opt.qps, opt.verify_budget, opt.ceilings.tflops, opt.ceilings.tbps)};
    csv = std::make_unique<CsvWriter>(opt.csv_path, csv_columns(), opt.resume, comments);
  }
  if (opt.progress) {
    std::fprintf(stderr, "cudal2 bench: %s, %d SMs, driver %s, cuBLAS %d; %zu shape(s), %zu method(s)%s\n",
                 gpu.name.c_str(), gpu.sm_count, gpu.driver.c_str(), gpu.cublas_version, todo.size(),
                 opt.methods.size(),
                 report.skipped_resumed ? fmt::format(", {} already in the CSV", report.skipped_resumed).c_str() : "");
  }

  StreamHolder stream;
  const cudaStream_t st = stream.s;
  std::unique_ptr<L2Flusher> flusher;
  if (std::find(opt.modes.begin(), opt.modes.end(), Mode::Server) != opt.modes.end())
    flusher = std::make_unique<L2Flusher>(gpu.l2_bytes);
  ClockReader clocks;

  std::vector<RunnerPtr> runners;
  for (const auto& f : opt.methods) runners.push_back(f.make());
  bool any_untrusted = false;
  for (const auto& r : runners) any_untrusted = any_untrusted || !r->trusted();
  // Chained batches: untrusted candidates' offline graph and eager batches, and the chain timer.
  const bool interleave = any_untrusted && opt.interleave;
  const bool offline = std::find(opt.modes.begin(), opt.modes.end(), Mode::Offline) != opt.modes.end();
  const bool chains = offline && (interleave || opt.timers[static_cast<int>(TimerKind::Chain)]);
  // Drawn afresh for each job (each run_bench): nothing a candidate could learn in advance.
  const JobSecrets secrets = opt.secrets ? *opt.secrets : JobSecrets::draw();
  DeviceChecker checker;  // the in-place scans and gathers of verify_once
  GuardedBuffer::set_guard_byte(secrets.guard_byte);
  const HardwarePeak peak =
      hopper_peak(gpu.sm_count, gpu.max_sm_clock_mhz, gpu.mem_clock_mhz, gpu.mem_bus_bits, double(gpu.l2_bytes));

  std::random_device rd;
  std::mt19937_64 rng(opt.seed ? opt.seed : (static_cast<uint64_t>(rd()) << 32) ^ rd());
  const auto t_start = Clock::now();
  // ETA weights each shape by a fixed cost (verification, set-up: ~0.1 s) plus its arithmetic.
  auto cost = [](const Shape& s) { return 1e11 + flops(s); };
  double total_cost = 0, done_cost = 0;
  for (const auto& s : todo) total_cost += cost(s);

  for (size_t si = 0; si < todo.size(); ++si) {
    const Shape s = todo[si];
    ShapeResult sr;
    sr.shape = s;
    sr.seed = rng();
    ShapeBuffers buf(s, chains);
    std::vector<size_t> live;  // indices of runners that passed so far
    for (size_t i = 0; i < runners.size(); ++i) {
      MethodResult mr;
      mr.method = opt.methods[i].name;
      mr.baseline = opt.methods[i].baseline;
      mr.layout = runners[i]->layout();
      sr.methods.push_back(std::move(mr));
    }
    // An untrusted method that fails a check is out for this shape, with the reason.
    auto fault = [&](size_t i, FailureKind kind, const std::string& detail) {
      auto& mr = sr.methods[i];
      mr.status = Status::Failed;
      mr.judge.fail(kind, detail);
      cudaGetLastError();
    };
    // Prepare on random-normal data (auto-tuning times candidates on it), then verify.
    buf.fill(false, sr.seed, st);
    for (size_t i = 0; i < runners.size(); ++i) {
      auto& mr = sr.methods[i];
      try {
        runners[i]->prepare(s, buf.operands(runners[i]->layout()), st);
        CUDAL2_CUDA(cudaStreamSynchronize(st));
        mr.details = runners[i]->details();
        live.push_back(i);
      } catch (const RunnerError& e) {
        mr.status = Status::Unsupported;
        mr.reason = e.what();
        cudaGetLastError();
      } catch (const CandidateFault& e) {
        fault(i, e.kind, e.what());
      }
    }
    std::unique_ptr<Judge> judge;
    if (any_untrusted) {
      judge = std::make_unique<Judge>(buf, secrets, st);
      judge->set_accum(opt.accum);
    }
    // An untrusted method's run followed by the judge's checks; false when it failed.
    auto checked = [&](size_t i, const std::function<void()>& run) {
      try {
        judge->arm(*runners[i]);
        run();
        if (const Finding finding = judge->check(*runners[i])) {
          sr.methods[i].judge.fail(finding.kind, finding.detail);
          sr.methods[i].status = Status::Failed;
          return false;
        }
        return true;
      } catch (const CandidateFault& e) {
        fault(i, e.kind, e.what());
      } catch (const std::exception& e) {
        fault(i, FailureKind::Error, e.what());
      }
      return false;
    };
    // The same for a chained batch of `calls` calls.
    auto checked_chain = [&](size_t i, const std::function<void()>& run, int calls) {
      try {
        judge->arm_chain(*runners[i], rng());
        run();
        if (const Finding finding = judge->check_chain(*runners[i], calls)) {
          sr.methods[i].judge.fail(finding.kind, finding.detail);
          sr.methods[i].status = Status::Failed;
          return false;
        }
        return true;
      } catch (const CandidateFault& e) {
        fault(i, e.kind, e.what());
      } catch (const std::exception& e) {
        fault(i, FailureKind::Error, e.what());
      }
      return false;
    };
    if (opt.verify) {
      for (bool exact : {false, true}) {
        const auto refill = [&] { buf.fill(exact, exact ? sr.seed ^ 0xE7AC7ull : sr.seed, st); };
        if (exact) refill();
        const Reference ref = host_reference(buf, opt.verify_budget, secrets.sampling_seed ^ sr.seed);
        if (judge) judge->snapshot();
        for (size_t i : live) {
          auto& mr = sr.methods[i];
          Verdict& v = exact ? mr.exact : mr.normal;
          try {
            verify_once(*runners[i], buf, ref, exact, opt.accum, secrets.poison, checker, st, v);
            if (!runners[i]->trusted() && !judge->inputs_intact()) {
              mr.judge.fail(FailureKind::InputModified, "the candidate changed its input operands");
              refill();  // the methods after it are judged on the inputs the reference was made from
            }
          } catch (const CandidateFault& e) {
            fault(i, e.kind, e.what());
          } catch (const std::exception& e) {
            v.fail(FailureKind::Error, e.what());
            cudaGetLastError();
          }
        }
      }
      // Untrusted methods: the whole output against the GPU reference, on every distribution.
      if (judge) {
        for (const auto& d : verification_distributions()) {
          judge->fresh_inputs(d, rng());
          for (size_t i : live) {
            auto& mr = sr.methods[i];
            if (runners[i]->trusted() || !mr.exact.ok || !mr.normal.ok || !mr.judge.ok) continue;
            if (!checked(i, [&] { runners[i]->run(st); })) mr.judge.detail += fmt::format(" (inputs: {})", d.name);
          }
        }
      }
      std::erase_if(live, [&](size_t i) {
        auto& mr = sr.methods[i];
        if (mr.exact.ok && mr.normal.ok && mr.judge.ok) return false;
        if (mr.status == Status::Ok)
          mr.status = mr.exact.failure == FailureKind::Error || mr.normal.failure == FailureKind::Error
                          ? Status::Error
                          : Status::Failed;
        return true;
      });
    }
    // Time on fresh random-normal inputs.
    buf.fill(false, sr.seed ^ 0x71A1ull, st);
    const InputDistribution& timing_inputs = verification_distributions().front();
    for (auto mode : opt.modes) {
      TimingConfig cfg;
      cfg.mode = mode;
      cfg.qps = opt.qps;
      cfg.timers = opt.timers;
      // Untrusted methods time offline batches of ~1 ms: the judge's clock bounds what a runner
      // reports within a calibrated margin per batch, small against this. (Baselines keep theirs.)
      // Chains: a batch holds no more calls than the judge keeps outputs for; every method of the
      // job is timed the same way, so ratios compare like with like.
      cfg.interleave = interleave;
      if (chains) cfg.max_inner = std::min(cfg.max_inner, buf.chain_capacity());
      TimingConfig untrusted_cfg = cfg;
      untrusted_cfg.target_batch_us = 1000;
      std::vector<std::unique_ptr<SampleTimer>> timers(runners.size());
      for (size_t i : live) {
        try {
          TimingConfig c = runners[i]->trusted() ? cfg : untrusted_cfg;
          c.interlude = buf.interlude(runners[i]->layout());
          c.seed_buffer = &buf.seed, c.slot_buffer = &buf.slots;
          timers[i] = runners[i]->make_timer(st, c, flusher.get());
          timers[i]->setup();
        } catch (const CandidateFault& e) {
          fault(i, e.kind, e.what());
          timers[i].reset();
        } catch (const std::exception& e) {
          sr.methods[i].status = Status::Error;
          sr.methods[i].reason = e.what();
          timers[i].reset();
          cudaGetLastError();
        }
      }
      std::vector<size_t> order;
      for (size_t i : live)
        if (timers[i]) order.push_back(i);
      const bool server = mode == Mode::Server;
      for (int rep = 0; rep < opt.reps; ++rep) {
        std::shuffle(order.begin(), order.end(), rng);
        std::vector<size_t> failed;
        for (size_t i : order) {
          if (runners[i]->trusted()) {
            for (auto t : kTimers)
              if (cfg.timers[static_cast<int>(t)]) timers[i]->sample(t, server ? &rng : nullptr);
            continue;
          }
          // Untrusted: fresh inputs before every batch, the output poisoned before it and verified
          // after it; a chained batch gives every call inputs of its own and verifies every call's
          // output (nothing to memoize); offline, one fresh single call besides.
          bool ok = true;
          for (auto t : kTimers) {
            if (!ok || !cfg.timers[static_cast<int>(t)]) continue;
            TimingConfig c = cfg;
            c.interlude = buf.interlude(runners[i]->layout());
            if (chained(c, t)) {
              ok = checked_chain(
                  i, [&] { timers[i]->sample(t, nullptr); }, timers[i]->inner());
              continue;
            }
            judge->fresh_inputs(timing_inputs, rng());
            ok = checked(i, [&] { timers[i]->sample(t, server ? &rng : nullptr); });
          }
          if (ok && !server) {
            judge->fresh_inputs(timing_inputs, rng());
            ok = checked(i, [&] { timers[i]->sample_single(); });
          }
          if (!ok) failed.push_back(i);
        }
        std::erase_if(order, [&](size_t i) { return std::find(failed.begin(), failed.end(), i) != failed.end(); });
        const int mhz = clocks.sm_mhz();
        if (mhz > 0) {
          sr.sm_mhz_min = sr.sm_mhz_min < 0 ? mhz : std::min(sr.sm_mhz_min, mhz);
          sr.sm_mhz_max = std::max(sr.sm_mhz_max, mhz);
        }
      }
      for (size_t i : order) {
        auto& mr = sr.methods[i];
        if (!runners[i]->trusted()) {
          if (const Finding defect = timers[i]->defect(plausible_floor_us(s, !server, peak))) {
            mr.judge.fail(defect.kind, defect.detail);
            mr.status = Status::Failed;
            continue;
          }
        }
        for (auto t : kTimers)
          if (!timers[i]->samples(t).empty()) {
            mr.timing[mode][static_cast<int>(t)] = summarize(timers[i]->samples(t));
            mr.samples[mode][static_cast<int>(t)] = timers[i]->samples(t);
          }
        mr.graph_error[mode] = timers[i]->graph_error();
        mr.inner[mode] = timers[i]->inner();
      }
    }
    for (size_t i : live) {
      if (runners[i]->trusted()) continue;
      const std::string left = runners[i]->leftovers();
      if (!left.empty() && sr.methods[i].judge.ok) {
        sr.methods[i].judge.fail(FailureKind::HostThread, left);
        sr.methods[i].status = Status::Failed;
        sr.methods[i].timing.clear();
      }
    }
    // A method that failed while being timed keeps no times: nothing of it may be recorded as fast.
    for (auto& mr : sr.methods)
      if (mr.status != Status::Ok) {
        mr.timing.clear();
        mr.samples.clear();
      }
    if (csv)
      for (const auto& mr : sr.methods)
        for (auto mode : opt.modes)
          for (auto t : kTimers)
            if (opt.timers[static_cast<int>(t)]) csv->row(csv_rows_for(sr, mr, mode, t, opt));
    done_cost += cost(s);
    if (opt.progress) {
      const double el = std::chrono::duration<double>(Clock::now() - t_start).count();
      const double eta = done_cost > 0 ? el * (total_cost - done_cost) / done_cost : 0;
      std::string best;
      if (const auto b = sr.best_baseline(opt.modes.front(), TimerKind::Graph))
        best = fmt::format(", best baseline {:.2f} us", *b);
      int bad = 0;
      for (const auto& mr : sr.methods) bad += mr.status != Status::Ok;
      std::fprintf(stderr, "[%zu/%zu] %-18s done%s%s | elapsed %.0fs, ETA %.0fs\n", si + 1, todo.size(),
                   s.str().c_str(), best.c_str(), bad ? fmt::format(", {} method(s) not ok", bad).c_str() : "", el,
                   eta);
    }
    report.shapes.push_back(std::move(sr));
  }
  return report;
}

void print_table(const BenchReport& r, const BenchOptions& opt) {
  for (auto mode : opt.modes) {
    std::printf(
        "\n== %s mode (accum %s): median us per call; TFLOP/s and %%roofline from graph; ratio = best baseline / this "
        "(graph) ==\n",
        std::string(to_string(mode)).c_str(), std::string(to_string(opt.accum)).c_str());
    std::printf("%-18s %-22s %10s %10s %10s %10s %8s %7s %6s  %s\n", "shape", "method", "graph", "eager", "host",
                "chain", "TFLOP/s", "%roof", "ratio", "status");
    for (const auto& sr : r.shapes) {
      const auto best = sr.best_baseline(mode, TimerKind::Graph);
      for (const auto& mr : sr.methods) {
        auto cell = [&](TimerKind t) -> std::string {
          if (!mr.timing.count(mode)) return "-";
          const auto& s = mr.timing.at(mode)[static_cast<int>(t)];
          return s ? fmt::format("{:.2f}", s->median)
                   : (t == TimerKind::Graph || (t == TimerKind::Chain && opt.timers[static_cast<int>(t)]) ? "no-graph"
                                                                                                          : "-");
        };
        std::string tf = "-", roof = "-", ratio = "-";
        if (mr.timing.count(mode)) {
          const auto& g = mr.timing.at(mode)[0];
          if (g) {
            tf = fmt::format("{:.1f}", tflops_at(sr.shape, g->median));
            roof = fmt::format("{:.1f}", 100.0 * roofline_us(sr.shape, opt.ceilings) / g->median);
            if (best) ratio = fmt::format("{:.3f}", *best / g->median);
          }
        }
        std::string status(to_string(mr.status));
        if (mr.status != Status::Ok) {
          const Verdict& v = mr.first_failure();
          status += ": " + (mr.reason.empty() ? std::string(to_string(v.failure)) + " (" + v.detail + ")" : mr.reason);
          if (status.size() > 90) status = status.substr(0, 87) + "...";
        } else if (mr.exact.sampled) {
          status += " (verified on sampled rows/cols)";
        }
        std::printf("%-18s %-22s %10s %10s %10s %10s %8s %7s %6s  %s\n", sr.shape.str().c_str(), mr.method.c_str(),
                    cell(TimerKind::Graph).c_str(), cell(TimerKind::Eager).c_str(), cell(TimerKind::Host).c_str(),
                    cell(TimerKind::Chain).c_str(), tf.c_str(), roof.c_str(), ratio.c_str(), status.c_str());
      }
    }
  }
}

void print_class_summary(const BenchReport& r, const BenchOptions& opt) {
  for (auto mode : opt.modes) {
    std::printf(
        "\n== %s mode: by shape class, geometric mean over shapes of (best baseline / method), graph timer ==\n",
        std::string(to_string(mode)).c_str());
    std::printf("%-22s %8s %8s %8s %8s %8s\n", "method", "small", "skinny", "medium", "large", "all");
    for (const auto& f : opt.methods) {
      std::map<std::string, std::vector<double>> by;
      for (const auto& sr : r.shapes) {
        const auto best = sr.best_baseline(mode, TimerKind::Graph);
        for (const auto& mr : sr.methods) {
          if (mr.method != f.name || !best || !mr.timing.count(mode) || !mr.timing.at(mode)[0]) continue;
          const double ratio = *best / mr.timing.at(mode)[0]->median;
          by[std::string(to_string(classify(sr.shape)))].push_back(ratio);
          by["all"].push_back(ratio);
        }
      }
      auto g = [&](const char* c) { return by.count(c) ? fmt::format("{:.3f}", geometric_mean(by[c])) : "-"; };
      std::printf("%-22s %8s %8s %8s %8s %8s\n", f.name.c_str(), g("small").c_str(), g("skinny").c_str(),
                  g("medium").c_str(), g("large").c_str(), g("all").c_str());
    }
  }
}

}  // namespace cudal2
