#include "protocol/modes.hpp"

#include <fmt/format.h>

#include "core/problem.hpp"

namespace cudal2 {

std::string_view to_string(Mode m) { return m == Mode::Offline ? "offline" : "server"; }
std::string_view to_string(TimerKind t) {
  switch (t) {
    case TimerKind::Graph:
      return "graph";
    case TimerKind::Eager:
      return "eager";
    case TimerKind::Host:
      return "host";
    case TimerKind::Chain:
      return "chain";
  }
  return "?";
}
Mode parse_mode(std::string_view s) {
  if (s == "offline") return Mode::Offline;
  if (s == "server") return Mode::Server;
  throw InputError(fmt::format("unknown mode '{}' (expected offline, server or both)", s));
}

}  // namespace cudal2
