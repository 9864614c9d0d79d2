// Child side of the sandbox: the request/response loop a child executable runs in main().
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <string>

#include "sandbox/sandbox.hpp"

namespace cudal2::sandbox {
namespace {

using nlohmann::json;

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

json failure(const std::string& error) { return {{"ok", false}, {"error", error}}; }

json answer(const std::function<json(const json&)>& handler, const std::string& line) {
  json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) {
    return failure("request is not JSON: " + line.substr(0, 200));
  }
  try {
    json response = handler(request);
    if (!response.is_object()) {
      return failure("handler returned a " + std::string(response.type_name()) + ", not an object");
    }
    return response;
  } catch (const std::exception& e) {
    return failure(e.what());
  } catch (...) {
    return failure("handler threw a non-standard exception");
  }
}

}  // namespace

int serve(const std::function<json(const json&)>& handler) {
  // Output already buffered for fd 1 would otherwise land on the protocol pipe after the switch.
  std::fflush(stdout);
  // Close-on-exec: a compiler or helper the handler runs must not hold the protocol pipes, or the
  // parent would see no end of file when this process dies.
  const int proto_in = fcntl(0, F_DUPFD_CLOEXEC, 3);
  const int proto_out = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (proto_in < 0 || proto_out < 0) {
    std::perror("cudal2::sandbox::serve: cannot take over stdin/stdout");
    return 1;
  }
  if (dup2(2, 1) < 0) {
    std::perror("cudal2::sandbox::serve: dup2(2, 1)");
    return 1;
  }
  // A library that reads stdin must not swallow requests.
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) {
    dup2(devnull, 0);
    ::close(devnull);
  }
  // Line buffering so stray output shows up in the parent's stderr tail before a crash rather
  // than dying in a buffer.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);

  std::string buf;
  std::size_t scanned = 0;  // buf holds no newline before this offset
  char chunk[65536];
  for (;;) {
    const std::size_t nl = buf.find('\n', scanned);
    if (nl == std::string::npos) {
      scanned = buf.size();
      ssize_t n = ::read(proto_in, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        return 1;
      }
      if (n == 0) {
        return 0;  // the parent closed our stdin: shut down cleanly
      }
      buf.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    std::string line = buf.substr(0, nl);
    buf.erase(0, nl + 1);
    scanned = 0;
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    const json response = answer(handler, line);
    // replace: a handler that puts compiler output (any bytes) into its answer still gets a line.
    if (!write_all(proto_out, response.dump(-1, ' ', false, json::error_handler_t::replace) + '\n')) {
      return 1;
    }
    // The handler's state is beyond repair (a CUDA context poisoned by a faulting kernel): end
    // the process after answering; the parent starts a fresh child for the next job.
    if (response.is_object() && response.value("exit_after", false)) {
      return 3;
    }
  }
}

}  // namespace cudal2::sandbox
