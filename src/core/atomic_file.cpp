#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/problem.hpp"

namespace fs = std::filesystem;

namespace cudal2 {

namespace {

fs::path directory_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

[[noreturn]] void fail(const fs::path& path, const std::string& what, int err) {
  throw std::runtime_error(fmt::format("cannot write '{}': {}: {}", path.string(), what, std::strerror(err)));
}

// Makes a rename in `dir` durable; failures here lose nothing already visible, so they are ignored.
void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// A unique name beside target: ".<name>.tmp-XXXXXX" (the X's replaced by mkstemp/mkdtemp).
std::vector<char> temp_template(const fs::path& target) {
  std::string name = ".";
  name += target.filename().string();
  name += ".tmp-XXXXXX";
  const std::string t = (directory_of(target) / name).string();
  std::vector<char> out(t.begin(), t.end());
  out.push_back('\0');
  return out;
}

}  // namespace

void check_output_file(const fs::path& path, std::string_view option) {
  std::error_code ec;
  if (path.empty()) throw InputError(fmt::format("{}: no file name", option));
  // The temporary file beside it adds a dozen characters to a name the system limits to 255.
  if (path.filename().string().size() > 240)
    throw InputError(fmt::format("{} '{}': the file name is longer than 240 characters", option, path.string()));
  if (fs::is_directory(path, ec))
    throw InputError(fmt::format("{} '{}' is a directory; name a file", option, path.string()));
  const fs::path dir = directory_of(path);
  if (!fs::is_directory(dir, ec) && !fs::is_directory(directory_of(dir), ec))
    throw InputError(
        fmt::format("{} '{}': directory '{}' does not exist", option, path.string(), directory_of(dir).string()));
}

fs::path resolve_output(const fs::path& path, std::string_view option) {
  fs::path at = path;
  std::error_code ec;
  // 40: the kernel's own limit on links followed in one lookup (ELOOP).
  for (int hops = 0; fs::is_symlink(fs::symlink_status(at, ec)); ++hops) {
    if (hops == 40) throw InputError(fmt::format("{} '{}': too many levels of symbolic links", option, path.string()));
    const fs::path to = fs::read_symlink(at, ec);
    if (ec) break;
    at = to.is_absolute() ? to : directory_of(at) / to;
  }
  return at;
}

namespace {

// Writes text to a device or FIFO as it is (no temporary file, no rename). A FIFO without a reader
// is refused at once rather than waited on.
void write_through(const fs::path& path, std::string_view text, std::string_view option) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO)
    throw InputError(fmt::format("{} '{}' is a FIFO nobody reads from (or a socket)", option, path.string()));
  if (fd < 0) fail(path, "opening", errno);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      fail(path, "writing", err);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) fail(path, "closing", errno);
}

}  // namespace

void write_file_atomically(const fs::path& given, std::string_view text, std::string_view option) {
  check_output_file(given, option);
  const fs::path path = resolve_output(given, option);
  check_output_file(path, option);
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
    write_through(path, text, option);
    return;
  }
  if (!fs::is_directory(directory_of(path), ec) && !fs::create_directory(directory_of(path), ec) && ec)
    fail(path, "cannot create its directory", ec.value());
  auto name = temp_template(path);
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(path, "cannot create a temporary file beside it", errno);
  const fs::path temp(name.data());
  auto give_up = [&](const std::string& what) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    fail(path, what, err);
  };
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) give_up("writing");
    done += static_cast<size_t>(n);
  }
  // mkstemp makes it 0600; an output file gets the usual rw-r--r-- (reading the umask would mean
  // changing it, which is process-wide).
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0) give_up("flushing to disk");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "closing", err);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "renaming the temporary file over it", err);
  }
  sync_directory(directory_of(path));
}

fs::path make_temp_sibling(const fs::path& target, bool directory) {
  auto name = temp_template(target);
  if (directory) {
    if (!::mkdtemp(name.data())) fail(target, "cannot create a temporary directory beside it", errno);
  } else {
    const int fd = ::mkstemp(name.data());
    if (fd < 0) fail(target, "cannot create a temporary file beside it", errno);
    ::close(fd);
  }
  return {name.data()};
}

void replace_atomically(const fs::path& temp, const fs::path& target) {
  std::error_code ec;
  if (fs::is_directory(temp, ec) && fs::exists(target, ec)) {
    // Swap, so the old tree stays whole until the new one is in place; then drop the old one.
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      fs::remove_all(temp, ec);
      sync_directory(directory_of(target));
      return;
    }
    if (errno != EINVAL && errno != ENOSYS) fail(target, "moving the new output into place", errno);
    // A file system without RENAME_EXCHANGE: the old one aside, the new one in, the old one gone.
    const fs::path old = make_temp_sibling(target, true);
    fs::remove(old, ec);
    if (::rename(target.c_str(), old.c_str()) != 0) fail(target, "moving the old output aside", errno);
    if (::rename(temp.c_str(), target.c_str()) != 0) {
      const int err = errno;
      ::rename(old.c_str(), target.c_str());
      fail(target, "moving the new output into place", err);
    }
    fs::remove_all(old, ec);
  } else if (::rename(temp.c_str(), target.c_str()) != 0) {
    fail(target, "moving the new output into place", errno);
  }
  sync_directory(directory_of(target));
}

}  // namespace cudal2
