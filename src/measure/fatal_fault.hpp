#pragma once
// When this process's CUDA context is poisoned (a faulting kernel), the answer that says so and
// asks the parent to replace the process ({"ok":false,"fatal":true,"kind":...,"exit_after":true}
// on the wire, protocol/protocol.hpp). Used by the judge and the runner alike.
#include <optional>

#include "protocol/protocol.hpp"

namespace cudal2 {

std::optional<protocol::ErrorAnswer> fatal_fault_answer();

}  // namespace cudal2
