#include "serve/bounded_server.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudal2::serve {

namespace {

bool wait_for(int fd, short events, int timeout_s) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, timeout_s * 1000);
    if (n < 0 && errno == EINTR) continue;
    return n > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len)) != 0) return;
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> serv{};
  if (::getnameinfo(sa, len, host.data(), host.size(), serv.data(), serv.size(), NI_NUMERICHOST | NI_NUMERICSERV) ==
      0) {
    ip = host.data();
    port = std::stoi(serv.data());
  }
}

// A socket stream that counts the bytes of the request's head as httplib takes them, and refuses
// the request (answering it itself, then failing every later read and write so that httplib adds
// nothing) once the request line or the head passes its limit.
class BoundedStream final : public httplib::Stream {
 public:
  BoundedStream(int fd, const HeaderLimits& limits) : fd_(fd), limits_(limits) {}

  bool is_readable() const override { return pos_ < len_ || wait_for(fd_, POLLIN, limits_.read_timeout_s); }
  bool is_writable() const override { return !refused_ && wait_for(fd_, POLLOUT, limits_.write_timeout_s); }

  ssize_t read(char* ptr, size_t size) override {
    if (refused_) return -1;
    if (pos_ == len_) {
      if (!wait_for(fd_, POLLIN, limits_.read_timeout_s)) return -1;
      ssize_t n = -1;
      do {
        n = ::recv(fd_, buf_.data(), buf_.size(), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0, len_ = static_cast<size_t>(n);
    }
    size_t n = std::min(size, len_ - pos_);
    if (in_head_) n = count_head(n);
    if (refused_) return -1;
    std::copy_n(buf_.data() + pos_, n, ptr);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    return ::send(fd_, ptr, size, MSG_NOSIGNAL);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(fd_, false, ip, port); }
  socket_t socket() const override { return fd_; }
  bool refused() const { return refused_; }

 private:
  // Walks the next n buffered bytes of the head; returns how many of them httplib may have (all,
  // or up to the head's end, after which nothing is counted).
  size_t count_head(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const char c = buf_[pos_ + i];
      ++head_;
      if (first_line_) {
        if (c == '\n') {
          first_line_ = false;
        } else if (head_ > limits_.request_line_bytes) {
          refuse(400, "Bad Request", "the request line is longer than the limit");
          return 0;
        }
      }
      tail_ = (tail_ << 8) | static_cast<unsigned char>(c);
      if ((tail_ & 0xffffffffu) == 0x0d0a0d0au) {
        in_head_ = false;
        return i + 1;
      }
      if (head_ > limits_.header_bytes) {
        refuse(431, "Request Header Fields Too Large", "the request's headers are larger than the limit");
        return 0;
      }
    }
    return n;
  }

  void refuse(int status, std::string_view reason, std::string_view why) {
    const std::string body = std::string(R"({"ok":false,"error":"too-large","message":")") + std::string(why) + "\"}";
    const std::string text = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                             "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                             "\r\nConnection: close\r\n\r\n" + body;
    if (wait_for(fd_, POLLOUT, limits_.write_timeout_s)) (void)::send(fd_, text.data(), text.size(), MSG_NOSIGNAL);
    refused_ = true;
  }

  int fd_;
  HeaderLimits limits_;
  std::array<char, 4096> buf_{};
  size_t pos_ = 0, len_ = 0;
  bool in_head_ = true, first_line_ = true, refused_ = false;
  size_t head_ = 0;
  std::uint64_t tail_ = 0;  // the last bytes of the head, to find its blank line
};

}  // namespace

bool BoundedServer::process_and_close_socket(socket_t sock) {
  BoundedStream strm(sock, limits_);
  bool closed = false;
  const bool ok = process_request(strm, true, closed, nullptr);
  if (strm.refused()) {
    // Closed with unread bytes, the socket sends a reset, and the client may lose the answer
    // before reading it: stop sending, then drop what still comes, briefly and boundedly.
    ::shutdown(sock, SHUT_WR);
    std::array<char, 65536> sink{};
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (size_t dropped = 0; dropped < (size_t{16} << 20) && std::chrono::steady_clock::now() < until;) {
      if (!wait_for(sock, POLLIN, 1)) break;
      const ssize_t n = ::recv(sock, sink.data(), sink.size(), 0);
      if (n <= 0) break;
      dropped += static_cast<size_t>(n);
    }
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace cudal2::serve
