#pragma once
// Every CUDA context this process has, as far as the runner can know: those the driver reported
// as created (runner/context_watch.hpp: a candidate that creates one through the driver API and
// pops it again is named there, though it never shows on a thread's context stack) and those seen
// on the answering thread's stack. Before each answer the runner synchronises every one of them
// (runner/contexts.hpp), so work a candidate leaves in a context of its own finishes inside the
// request the judge times. Plain C++ (contexts are opaque handles): the rules are tested on the CPU.
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace cudal2 {

class ContextRegistry {
 public:
  // The driver's reports (any thread: the one that creates or destroys the context).
  void created(void* ctx);
  void destroyed(void* ctx);
  // A context seen on a thread's stack: known from now on, like a created one.
  void seen(void* ctx);
  std::vector<void*> known() const;

  // The driver calls one synchronisation needs; each returns true on success.
  struct Driver {
    std::function<bool(void*)> push;  // make ctx current on this thread
    std::function<bool()> sync;       // wait for all work of the current context
    std::function<void()> pop;        // restore the previous one
  };
  // Synchronises every known context, in turn; a context that can no longer be made current was
  // destroyed since and is forgotten. "" when all finished, else the first failure.
  std::string sync_all(const Driver& drv);

  // The process's registry: the driver's callbacks report into it.
  static ContextRegistry& process();

 private:
  mutable std::mutex mu_;
  std::set<void*> known_;
};

}  // namespace cudal2
