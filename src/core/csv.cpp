#include "core/csv.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <filesystem>
#include <sstream>

#include "core/problem.hpp"

namespace cudal2 {

std::string csv_escape(std::string_view f) {
  // A leading '#' is quoted too: readers skip unquoted '#' lines as comments.
  if (f.find_first_of(",\"\n\r") == std::string_view::npos && (f.empty() || f[0] != '#')) return std::string(f);
  std::string out = "\"";
  for (char c : f) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::vector<std::string> csv_split(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  if (quoted) throw InputError("CSV record has an unterminated quote");
  out.push_back(std::move(cur));
  return out;
}

CsvWriter::CsvWriter(const std::string& path, std::vector<std::string> columns, bool append,
                     const std::vector<std::string>& comments)
    : columns_(std::move(columns)) {
  std::error_code ec;
  const bool fresh = !append || !std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0;
  bool header = fresh;
  if (!fresh) {
    // Rows appended under another header would make the whole file unreadable (read_csv counts
    // fields against the header): a file written with other columns is refused, untouched.
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line) && (line.empty() || line[0] == '#')) {
    }
    header = line.empty() || line[0] == '#';  // comments only: the header is still to come
    if (!header && csv_split(line) != columns_)
      throw InputError(fmt::format("cannot append to CSV file '{}': its columns ({}) are not these ({})", path,
                                   fmt::join(csv_split(line), ","), fmt::join(columns_, ",")));
  }
  out_.open(path, fresh ? std::ios::trunc : std::ios::app);
  if (!out_) throw InputError(fmt::format("cannot write CSV file '{}'", path));
  if (fresh)
    for (const auto& c : comments) out_ << "# " << c << '\n';
  if (header) {
    for (size_t i = 0; i < columns_.size(); ++i) out_ << (i ? "," : "") << csv_escape(columns_[i]);
    out_ << '\n';
  }
  out_.flush();
}

void CsvWriter::row(const std::vector<std::string>& fields) {
  if (fields.size() != columns_.size())
    throw std::invalid_argument(fmt::format("CSV row has {} fields, header has {}", fields.size(), columns_.size()));
  for (size_t i = 0; i < fields.size(); ++i) out_ << (i ? "," : "") << csv_escape(fields[i]);
  out_ << '\n';
  out_.flush();
}

std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read CSV file '{}'", path));
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    try {
      f = csv_split(line);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}:{}: {}", path, lineno, e.what()));
    }
    if (header.empty()) {
      header = std::move(f);
      continue;
    }
    if (f.size() != header.size())
      throw InputError(fmt::format("{}:{}: {} fields, header has {}", path, lineno, f.size(), header.size()));
    std::map<std::string, std::string> r;
    for (size_t i = 0; i < f.size(); ++i) r[header[i]] = std::move(f[i]);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace cudal2
