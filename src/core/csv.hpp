#pragma once
// Minimal RFC 4180 CSV: quoting on write, quoted fields on read. Lines starting with '#'
// before the header carry run metadata (pandas: read_csv(..., comment='#')).
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cudal2 {

std::string csv_escape(std::string_view field);
std::vector<std::string> csv_split(std::string_view line);  // one record; throws on unbalanced quotes

class CsvWriter {
 public:
  // append: keep existing rows (the header is written only when the file is new or empty).
  CsvWriter(const std::string& path, std::vector<std::string> columns, bool append,
            const std::vector<std::string>& comments = {});
  void row(const std::vector<std::string>& fields);  // flushed at once: a killed run keeps its rows
  const std::vector<std::string>& columns() const { return columns_; }

 private:
  std::ofstream out_;
  std::vector<std::string> columns_;
};

// Rows as column->value maps; '#' lines skipped. Throws InputError if unreadable or malformed.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path);

}  // namespace cudal2
