// The sandbox's results as the tuner and the judge read them: outcome and signal names, and the
// JSON form (any bytes a child wrote made valid UTF-8).
#include <signal.h>

#include <string>
#include <string_view>

#include "sandbox/sandbox.hpp"

namespace cudal2::sandbox {
namespace {

using nlohmann::json;

// Well-formed UTF-8 (Unicode table 3-7) with each bad byte replaced by U+FFFD, so stderr that
// holds binary junk can still go into JSON.
std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c == 0xE0) {
      len = 3, lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      len = 3;
    } else if (c == 0xED) {
      len = 3, hi = 0x9F;
    } else if (c == 0xF0) {
      len = 4, lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      len = 4;
    } else if (c == 0xF4) {
      len = 4, hi = 0x8F;
    }
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string_view outcome_name(Outcome kind) {
  switch (kind) {
    case Outcome::Ok:
      return "ok";
    case Outcome::Crashed:
      return "crashed";
    case Outcome::Exited:
      return "exited";
    case Outcome::Hung:
      return "hung";
    case Outcome::ProtocolError:
      return "protocol_error";
  }
  return "unknown";
}

std::string signal_name(int signo) {
  switch (signo) {
#define CUDAL2_SIG(name) \
  case name:             \
    return #name;
    CUDAL2_SIG(SIGHUP)
    CUDAL2_SIG(SIGINT)
    CUDAL2_SIG(SIGQUIT)
    CUDAL2_SIG(SIGILL)
    CUDAL2_SIG(SIGTRAP)
    CUDAL2_SIG(SIGABRT)
    CUDAL2_SIG(SIGBUS)
    CUDAL2_SIG(SIGFPE)
    CUDAL2_SIG(SIGKILL)
    CUDAL2_SIG(SIGUSR1)
    CUDAL2_SIG(SIGSEGV)
    CUDAL2_SIG(SIGUSR2)
    CUDAL2_SIG(SIGPIPE)
    CUDAL2_SIG(SIGALRM)
    CUDAL2_SIG(SIGTERM)
    CUDAL2_SIG(SIGCHLD)
    CUDAL2_SIG(SIGCONT)
    CUDAL2_SIG(SIGSTOP)
    CUDAL2_SIG(SIGTSTP)
    CUDAL2_SIG(SIGTTIN)
    CUDAL2_SIG(SIGTTOU)
    CUDAL2_SIG(SIGURG)
    CUDAL2_SIG(SIGXCPU)
    CUDAL2_SIG(SIGXFSZ)
    CUDAL2_SIG(SIGVTALRM)
    CUDAL2_SIG(SIGPROF)
    CUDAL2_SIG(SIGWINCH)
    CUDAL2_SIG(SIGIO)
    CUDAL2_SIG(SIGSYS)
#ifdef SIGSTKFLT
    CUDAL2_SIG(SIGSTKFLT)
#endif
#ifdef SIGPWR
    CUDAL2_SIG(SIGPWR)
#endif
#undef CUDAL2_SIG
    default:
      break;
  }
  if (signo >= SIGRTMIN && signo <= SIGRTMAX) {
    return "SIGRTMIN+" + std::to_string(signo - SIGRTMIN);
  }
  return "signal " + std::to_string(signo);
}

json Result::to_json() const {
  json j = {{"kind", outcome_name(kind)},
            {"message", valid_utf8(message)},
            {"pid", pid},
            {"elapsed_ms", elapsed.count()},
            {"stderr_tail", valid_utf8(stderr_tail)}};
  if (kind == Outcome::Ok) {
    j["response"] = response;
  }
  if (kind == Outcome::Exited) {
    j["exit_code"] = exit_code;
  }
  if (kind == Outcome::Crashed) {
    j["signal"] = signal;
    j["signal_name"] = signal_name;
  }
  if (!confinement.empty() && confinement != "none") {
    j["confinement"] = confinement;
  }
  return j;
}

}  // namespace cudal2::sandbox
