// CSV input of the command-line tools: RFC 4180 with the forms that R, spreadsheets and Python write.
//   - Fields are separated by commas; records end with LF or CRLF. A field may be quoted ("..."), with "" standing for
//     a quote inside it; a quoted field may hold commas and line breaks. Spaces around an unquoted field are trimmed.
//   - Lines that start with '#' before the header are comments and are skipped.
//   - The first record is the header. Names may be quoted (R's write.csv quotes them); a name given twice is refused,
//     since which of the two columns a release would read is a guess. An empty name (the row-name column of R's
//     write.csv) is kept but can never be selected. A UTF-8 byte-order mark before the header is skipped.
//   - Every data record has as many fields as the header (a short or long row is refused with its line number); blank
//     lines are skipped.
//   - Numbers are decimal only: an optional sign, digits with an optional point, an optional exponent. Hexadecimal
//     (0x10), inf, nan and NA are refused, so a value is never read as something its author did not write.
// Values echoed in error messages are cut to a few dozen characters. Output: write_csv_number.
#pragma once

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace privpost::tools {

/// Writes x as the shortest decimal text that reads back to the same double (std::to_chars' round trip; plain or
/// exponent form, whichever is shorter): whole numbers and round values in a few characters instead of %.17g's
/// padding (2 -> "2", 0.1 -> "0.1"); a draw from a continuous law still needs its 15-17 digits to read back exactly.
inline void write_csv_number(std::ostream& os, double x) {
  std::array<char, 32> buf;  // the longest shortest form, e.g. -2.2250738585072014e-308, has 24 characters
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  if (ec != std::errc{}) throw std::logic_error("write_csv_number: 32 characters hold no double");
  os.write(buf.data(), end - buf.data());
}

/// x rounded to `digits` significant decimal digits (1 to 17), as printf's %.<digits>g would print it, read back; a
/// whole number (a count, a value clamped to a whole bound) and a non-finite value are returned unchanged, so that
/// rounding never turns a count into another count. digits 0: x itself; a subnormal x may be kept whole.
inline double round_significant(double x, int digits) {
  if (digits < 0 || digits > 17)
    throw std::invalid_argument("round_significant: digits is " + std::to_string(digits) + "; accepted: 0 to 17");
  if (digits == 0 || !std::isfinite(x) || x == std::trunc(x)) return x;
  std::array<char, 40> buf;  // -d.dddddddddddddddde-308: at most 24 characters
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x, std::chars_format::scientific, digits - 1);
  if (ec != std::errc{}) throw std::logic_error("round_significant: 40 characters hold no double");
  double r = 0.0;
  // A subnormal x may read back as out of range (ERANGE from strtod): it is then kept as it is.
  return std::from_chars(buf.data(), end, r).ec == std::errc{} ? r : x;
}

/// text for an error message: at most 40 characters of it, and its length when cut (a 100 MB cell is not echoed).
inline std::string echo(const std::string& text) {
  constexpr std::size_t keep = 40;
  if (text.size() <= keep) return text;
  return text.substr(0, keep) + "... (" + std::to_string(text.size()) + " characters)";
}

/// True when text is a decimal number: [+-]digits[.digits][(e|E)[+-]digits], with at least one digit before the
/// exponent (".5" and "5." are accepted, as R and spreadsheets write them).
inline bool is_decimal_number(const std::string& text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  auto digits = [&] {
    const std::size_t from = i;
    while (i < n && text[i] >= '0' && text[i] <= '9') ++i;
    return i - from;
  };
  if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t mantissa = digits();
  if (i < n && text[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == n;
}

/// A parsed CSV file: the header's names and the data records, each with the line number it starts on.
struct csv_table {
  std::vector<std::string> names;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> rows;
};

/// Whether a file with a header and no data rows is an error (a data set) or not (one rank's shard of a data set,
/// which may hold no records; the release refuses when every shard is empty).
enum class csv_rows { at_least_one, any };

/// Parses CSV text as the file comment describes; source names the file in messages. std::invalid_argument on an
/// unterminated quote, text after a closing quote, a duplicate name, a row of the wrong length, no data.
inline csv_table parse_csv(const std::string& text, const std::string& source, csv_rows rows = csv_rows::at_least_one) {
  csv_table table;
  std::size_t at = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) at = 3;  // UTF-8 byte-order mark (Excel's "CSV UTF-8")
  std::size_t line = 1;
  const std::size_t n = text.size();
  auto where = [&](std::size_t l) { return "CSV file '" + source + "' line " + std::to_string(l); };
  bool header = true;
  while (at < n) {
    if (header && text[at] == '#') {  // a comment line before the header (privpost-synthesize writes its provenance so)
      while (at < n && text[at] != '\n') ++at;
      if (at < n) ++at;
      ++line;
      continue;
    }
    const std::size_t record_line = line;
    std::vector<std::string> fields;
    std::vector<bool> quoted;
    bool end_of_record = false;
    while (!end_of_record) {
      std::string field;
      bool was_quoted = false;
      while (at < n && text[at] == ' ') ++at;
      if (at < n && text[at] == '"') {
        was_quoted = true;
        const std::size_t opened = line;
        ++at;
        for (;;) {
          if (at >= n) throw std::invalid_argument(where(opened) + ": a quoted field is never closed");
          const char c = text[at++];
          if (c == '"') {
            if (at < n && text[at] == '"') {
              field += '"';
              ++at;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        while (at < n && text[at] == ' ') ++at;
        if (at < n && text[at] != ',' && text[at] != '\n' && text[at] != '\r')
          throw std::invalid_argument(where(line) +
                                      ": text after a closing quote (a quote inside a quoted field is "
                                      "written \"\")");
      } else {
        const std::size_t from = at;
        while (at < n && text[at] != ',' && text[at] != '\n' && text[at] != '\r') {
          if (text[at] == '"')
            throw std::invalid_argument(where(line) + ": a quote inside an unquoted field (quote the whole field)");
          ++at;
        }
        field.assign(text, from, at - from);
        while (!field.empty() && field.back() == ' ') field.pop_back();
      }
      fields.push_back(std::move(field));
      quoted.push_back(was_quoted);
      if (at < n && text[at] == ',') {
        ++at;
        continue;
      }
      if (at < n && text[at] == '\r') ++at;
      if (at < n && text[at] == '\n') ++at;
      ++line;
      end_of_record = true;
    }
    const bool blank = fields.size() == 1 && fields[0].empty() && !quoted[0];
    if (blank) continue;
    if (header) {
      header = false;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].empty()) continue;  // an unnamed column (R's row names): kept, never selected
        for (std::size_t k = 0; k < i; ++k)
          if (fields[k] == fields[i])
            throw std::invalid_argument("CSV file '" + source + "': the column name '" + echo(fields[i]) +
                                        "' is given twice (columns " + std::to_string(k + 1) + " and " + std::to_string(i + 1) +
                                        "); accepted: distinct names");
      }
      table.names = std::move(fields);
      continue;
    }
    if (fields.size() != table.names.size())
      throw std::invalid_argument(where(record_line) + ": " + std::to_string(fields.size()) + " field(s); the header has " +
                                  std::to_string(table.names.size()));
    table.rows.emplace_back(record_line, std::move(fields));
  }
  if (header) throw std::invalid_argument("CSV file '" + source + "' is empty");
  if (table.rows.empty() && rows == csv_rows::at_least_one)
    throw std::invalid_argument("CSV file '" + source + "' has no data rows");
  return table;
}

/// Reads and parses a CSV file (parse_csv).
inline csv_table read_csv(const std::string& path, csv_rows rows = csv_rows::at_least_one) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot open CSV file '" + path + "'");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read CSV file '" + path + "'");
  return parse_csv(text, path, rows);
}

/// The cells of one named column, one per data row, each with its line number. Throws when the column is missing.
inline std::vector<std::pair<std::size_t, std::string>> column_cells(const csv_table& table, const std::string& column,
                                                                     const std::string& source) {
  std::size_t index = table.names.size();
  for (std::size_t i = 0; i < table.names.size(); ++i)
    if (!column.empty() && table.names[i] == column) index = i;
  if (index == table.names.size()) {
    std::string names;
    for (std::size_t i = 0; i < table.names.size() && i < 20; ++i) names += (i ? ", " : "") + echo(table.names[i]);
    if (table.names.size() > 20) names += ", ... (" + std::to_string(table.names.size()) + " columns)";
    throw std::invalid_argument("CSV file '" + source + "' has no column '" + echo(column) + "'; its columns: " + names);
  }
  std::vector<std::pair<std::size_t, std::string>> out;
  out.reserve(table.rows.size());
  for (const auto& [line, fields] : table.rows) out.emplace_back(line, fields[index]);
  return out;
}

/// Reads one named column of a CSV file as text, one cell per data row, each with its line number.
inline std::vector<std::pair<std::size_t, std::string>> read_csv_cells(const std::string& path, const std::string& column,
                                                                       csv_rows rows = csv_rows::at_least_one) {
  return column_cells(read_csv(path, rows), column, path);
}

/// Parses a CSV cell as a finite decimal number; std::invalid_argument naming the line, the column and the cell.
inline double parse_csv_number(const std::string& cell, std::size_t line, const std::string& column) {
  if (is_decimal_number(cell)) {
    errno = 0;
    const double x = std::strtod(cell.c_str(), nullptr);
    if (std::isfinite(x)) return x;
  }
  throw std::invalid_argument("CSV line " + std::to_string(line) + ": '" + echo(cell) + "' in column '" + echo(column) +
                              "' is not a finite decimal number");
}

/// Reads one named numeric column of a CSV file (decimal numbers only, finite).
inline std::vector<double> read_csv_column(const std::string& path, const std::string& column,
                                           csv_rows rows = csv_rows::at_least_one) {
  std::vector<double> values;
  for (const auto& [line, cell] : read_csv_cells(path, column, rows)) values.push_back(parse_csv_number(cell, line, column));
  return values;
}

}  // namespace privpost::tools
