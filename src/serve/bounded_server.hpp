#pragma once
// The HTTP server of `cudal2 serve`: cpp-httplib's, reading each connection through a stream that
// bounds the request line and the header block. httplib (0.11) reads both without a limit and
// before any handler (the token check included) runs: one client streaming 210 MB of header lines
// took the server from 164 to 618 MB. Here a request line over its limit is answered 400 and a
// header block over its limit 431, at once, and the connection closed; the body stays bounded by
// httplib's payload limit. One request per connection (keep-alive would need the bounds reset
// between requests): each response says "Connection: close".
#include <httplib.h>

#include <cstddef>

namespace cudal2::serve {

struct HeaderLimits {
  size_t request_line_bytes = 8192;  // "POST /evaluate HTTP/1.1"
  size_t header_bytes = 65536;       // the request line and every header line together
  int read_timeout_s = 10;           // a connection that sends nothing for this long is closed
  int write_timeout_s = 30;
};

class BoundedServer final : public httplib::Server {
 public:
  explicit BoundedServer(const HeaderLimits& limits) : limits_(limits) {}

 private:
  bool process_and_close_socket(socket_t sock) override;
  HeaderLimits limits_;
};

}  // namespace cudal2::serve
