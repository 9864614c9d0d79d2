#pragma once
// Output files written whole or not at all. A file rewritten in place and cut short (a full disk,
// a kill) is worse than none: a reader takes the truncated table or JSON line for the real thing.
// Here the new content goes to a temporary file in the target's directory (same file system, so
// the rename is atomic), is fsynced, renamed over the target, and the directory fsynced. On any
// failure the old file stays as it was and the temporary file is removed.
#include <filesystem>
#include <string>
#include <string_view>

namespace cudal2 {

// Throws InputError when `path` cannot be an output file: a directory, or in a directory whose
// parent does not exist either (the file's own directory is created when missing, no more: a
// mistyped path must not grow a tree from the root). `option` names the option ("--out").
void check_output_file(const std::filesystem::path& path, std::string_view option);

// The file an output named `path` is: symbolic links followed to the end (a link to a dataset's
// table stays a link and its target gets the new content; a dangling one names the file to
// create). Throws InputError for a loop of links.
std::filesystem::path resolve_output(const std::filesystem::path& path, std::string_view option);

// check_output_file, creates the file's directory if missing, then writes `text` to `path`
// atomically as above. A path that is a device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is
// written through instead: renaming over it replaced the device with a regular file (/dev/null
// too, as root). Throws InputError for a bad path and std::runtime_error naming the path and the
// system's reason when writing fails.
void write_file_atomically(const std::filesystem::path& path, std::string_view text, std::string_view option);

// A temporary sibling of `target` (same directory, hidden, unique), created as a directory when
// `directory`, else as an empty file: for outputs produced by another program and then moved into
// place with replace_atomically. Throws std::runtime_error when it cannot be created.
std::filesystem::path make_temp_sibling(const std::filesystem::path& target, bool directory);

// Moves `temp` (from make_temp_sibling) to `target`: a file by rename; a directory by exchanging
// it with an existing target (renameat2 RENAME_EXCHANGE) and removing the old one. Throws
// std::runtime_error naming target when it cannot.
void replace_atomically(const std::filesystem::path& temp, const std::filesystem::path& target);

}  // namespace cudal2
