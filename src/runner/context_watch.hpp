#pragma once
// The driver's word on every context this process creates: CUPTI's resource callbacks (context
// created, context being destroyed) feed ContextRegistry::process() (runner/context_registry.hpp).
// No other CUDA API lists a process's contexts, and a candidate that creates one through the driver
// API and pops it again leaves it on no thread's stack. CUPTI is loaded with dlopen (the runner does
// not link it; a machine without it runs as before, its stack-only view recorded as the reason).
// Only the two resource callbacks are enabled: no launch or activity tracing, so timing is as it was.
#include <string>

namespace cudal2 {

// Starts watching; call before any CUDA context exists (the runner's first request). "" when the
// driver reports contexts from now on, else why not.
std::string watch_context_creation();

}  // namespace cudal2
