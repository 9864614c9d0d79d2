#pragma once
// User-named input files and user text in messages, bounded. `bench --shapes /dev/zero` grew to
// 2.3 GB and died of std::bad_alloc, a directory failed with "basic_filebuf::underflow error",
// and a 5 MB bad line was echoed whole to stderr.
#include <cstddef>
#include <string>
#include <string_view>

namespace cudal2 {

// The file's bytes. Throws InputError (`what` names the kind of file, e.g. "shapes file") for a
// directory, an unreadable file, one larger than max_bytes (read no further) and one holding a NUL
// byte (binary, not text).
std::string read_input_file(const std::string& path, std::string_view what, size_t max_bytes = size_t{64} << 20);

// The same for a file that may hold any bytes (a built artifact): no NUL check.
std::string read_input_bytes(const std::string& path, std::string_view what, size_t max_bytes = size_t{64} << 20);

// `text` for an error message: whole when at most `max` characters, else its start, "..." and its
// length.
std::string excerpt(std::string_view text, size_t max = 80);

}  // namespace cudal2
