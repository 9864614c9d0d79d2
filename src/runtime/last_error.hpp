#pragma once
// The runtime's per-thread error text (cudal2_last_error): what the last failing call on this
// thread said, cleared when a call starts.
#include <cudal2/cudal2.h>

namespace cudal2::rt {

// Records the message (printf-style) for cudal2_last_error and returns st.
cudal2_status_t fail(cudal2_status_t st, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// A call starts: no error yet.
void clear_error();

}  // namespace cudal2::rt
