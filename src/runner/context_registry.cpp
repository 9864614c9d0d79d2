#include "runner/context_registry.hpp"

namespace cudal2 {

void ContextRegistry::created(void* ctx) {
  if (!ctx) return;
  std::lock_guard<std::mutex> lock(mu_);
  known_.insert(ctx);
}

void ContextRegistry::destroyed(void* ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  known_.erase(ctx);
}

void ContextRegistry::seen(void* ctx) { created(ctx); }

std::vector<void*> ContextRegistry::known() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {known_.begin(), known_.end()};
}

std::string ContextRegistry::sync_all(const Driver& drv) {
  std::string err;
  // A copy: the driver may report a context destroyed (or created) while we synchronise.
  for (void* ctx : known()) {
    if (!drv.push(ctx)) {
      destroyed(ctx);
      continue;
    }
    const bool ok = drv.sync();
    drv.pop();
    if (!ok && err.empty()) err = "a context of this process failed to synchronise";
  }
  return err;
}

ContextRegistry& ContextRegistry::process() {
  static ContextRegistry* r = new ContextRegistry;  // never destroyed: driver callbacks may outlive main
  return *r;
}

}  // namespace cudal2
