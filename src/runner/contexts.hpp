#pragma once
// Before the runner answers, the whole device is synchronised in every context of this process it
// knows (runner/context_registry.hpp): the primary context (the runtime's), every context on the
// answering thread's context stack (a candidate that created one with the driver API and left it
// pushed), and every context the driver reported as created (runner/context_watch.hpp), which is
// how a context created and popped again by the candidate is reached. So work left running there
// finishes inside the request and shows on the judge's clock. Where the driver's reports are not
// available, such work is the judge's probe's to see (judge/contention.hpp).
// docs/threat-model.md, "Time only what the call does".
#include <string>

namespace cudal2 {

// "" when every known context finished its work, else the first error.
std::string sync_every_context();

// The contexts known now (the current one included) are the runner's own: call once its trusted
// set-up is done, before candidate code is loaded.
void mark_own_contexts();

// Contexts known beyond the runner's own: a candidate's (no honest kernel creates one; the ABI
// hands it a stream). The judge fails a candidate whose runner reports any (judge/runner_proxy.cpp).
int foreign_contexts();

}  // namespace cudal2
