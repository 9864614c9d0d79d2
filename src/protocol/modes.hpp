#pragma once
// Modes and timers by name: what a measurement was taken under (measure/timing.hpp has what each
// one does; docs/measuring.md). Words of the judge protocol, the bench CSV and the store, so they
// live here, apart from the CUDA code that times.
#include <array>
#include <string_view>

namespace cudal2 {

enum class Mode { Offline, Server };
enum class TimerKind { Graph = 0, Eager = 1, Host = 2, Chain = 3 };
inline constexpr int kTimerCount = 4;
inline constexpr std::array<TimerKind, kTimerCount> kTimers{TimerKind::Graph, TimerKind::Eager, TimerKind::Host,
                                                            TimerKind::Chain};
// Which timers run, indexed by TimerKind. The default leaves chain out (it costs a second graph).
using TimerSet = std::array<bool, kTimerCount>;
inline constexpr TimerSet kDefaultTimers{true, true, true, false};
std::string_view to_string(Mode m);
std::string_view to_string(TimerKind t);
Mode parse_mode(std::string_view s);

}  // namespace cudal2
