// A small reader of CmdStan's CSV format (https://mc-stan.org/docs/cmdstan-guide/stan_csv_apdx.html), independent of
// the writer in examples/tools/cmdstan_csv.hpp, for testing privpost-infer --output-dir. It applies
// the rules the outside readers rely on and throws std::runtime_error naming the line when a file breaks one:
//  - lines starting with '#' are comments; before the header row, "key = value" comments form the configuration
//    (indentation and a trailing " (Default)" dropped; a later key overwrites an earlier one, as flat readers do);
//  - the first other line is the header row: comma-separated column names, each a Stan name (a letter, then letters,
//    digits or underscores, then optional ".<index>" parts with indices from 1) or a sampler column ending in "__";
//    no duplicates; sampler columns come before the parameters;
//  - every later non-comment line is a draw with exactly one number per column (strtod reads the whole field; "nan",
//    "inf" and "-inf" as Stan writes them);
//  - the configuration has method = sample, and num_samples / thin draws unless the run was cut short.
#pragma once

#include <Eigen/Core>
#include <cctype>
#include <cstdlib>
#include <istream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace privpost::test {

struct cmdstan_csv {
  std::map<std::string, std::string> config;  ///< the leading comments' key = value pairs
  std::vector<std::string> columns;           ///< the header row
  std::vector<std::vector<double>> rows;      ///< one per draw
  std::size_t sampler_columns = 0;            ///< how many columns end in "__" (they come first)
  std::map<std::string, std::size_t> index;   ///< column name -> position
  const std::string& at(const std::string& key) const {
    const auto it = config.find(key);
    if (it == config.end()) throw std::runtime_error("cmdstan csv: no configuration key '" + key + "'");
    return it->second;
  }
};

namespace detail {
inline std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream in(s);
  while (std::getline(in, item, ',')) out.push_back(item);
  if (!s.empty() && s.back() == ',') out.emplace_back();
  return out;
}

// A Stan variable name with optional .<index> parts (theta, theta.1, beta.2.3), or a sampler column (lp__).
inline bool stan_column_name(const std::string& n) {
  if (n.size() > 2 && n.compare(n.size() - 2, 2, "__") == 0) {
    for (const char c : n)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return std::isalpha(static_cast<unsigned char>(n[0])) != 0;
  }
  std::vector<std::string> parts;
  std::string item;
  std::stringstream in(n);
  while (std::getline(in, item, '.')) parts.push_back(item);
  if (parts.empty() || parts[0].empty() || !std::isalpha(static_cast<unsigned char>(parts[0][0]))) return false;
  for (const char c : parts[0])
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  if (parts[0].size() >= 2 && parts[0].compare(parts[0].size() - 2, 2, "__") == 0) return false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].empty() || parts[i][0] == '0') return false;
    for (const char c : parts[i])
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return n.back() != '.';
}
}  // namespace detail

/// Reads one CmdStan CSV file; throws std::runtime_error naming the line and the rule it breaks. cut_short: the file of a
/// run that was killed may hold fewer draws than its num_samples / thin (never more), as CmdStan's own does.
inline cmdstan_csv read_cmdstan_csv(std::istream& in, bool cut_short = false) {
  cmdstan_csv out;
  std::string line;
  int number = 0;
  bool header = false;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error("cmdstan csv line " + std::to_string(number) + ": " + what + " ('" + line + "')");
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '#') {
      if (header) continue;  // adaptation and timing comments may follow the header row
      const std::string body = detail::trim(line.substr(1));
      const auto eq = body.find(" = ");
      if (eq == std::string::npos) continue;  // a block name such as "sample" or "release"
      std::string value = detail::trim(body.substr(eq + 3));
      const std::string suffix = " (Default)";
      if (value.size() >= suffix.size() && value.compare(value.size() - suffix.size(), suffix.size(), suffix) == 0)
        value = value.substr(0, value.size() - suffix.size());
      out.config[detail::trim(body.substr(0, eq))] = value;
      continue;
    }
    if (detail::trim(line).empty()) fail("an empty line");
    if (!header) {
      header = true;
      out.columns = detail::split_commas(line);
      bool parameters = false;
      for (std::size_t j = 0; j < out.columns.size(); ++j) {
        const std::string& c = out.columns[j];
        if (!detail::stan_column_name(c)) fail("column '" + c + "' is not a Stan name");
        if (!out.index.emplace(c, j).second) fail("column '" + c + "' appears twice");
        const bool sampler = c.size() > 2 && c.compare(c.size() - 2, 2, "__") == 0;
        if (sampler && parameters) fail("sampler column '" + c + "' after a parameter column");
        if (sampler) ++out.sampler_columns;
        parameters = parameters || !sampler;
      }
      continue;
    }
    const auto fields = detail::split_commas(line);
    if (fields.size() != out.columns.size())
      fail(std::to_string(fields.size()) + " fields for " + std::to_string(out.columns.size()) + " columns");
    std::vector<double> row;
    row.reserve(fields.size());
    for (const auto& f : fields) {
      char* end = nullptr;
      const double x = std::strtod(f.c_str(), &end);
      if (f.empty() || end != f.c_str() + f.size()) fail("field '" + f + "' is not a number");
      row.push_back(x);
    }
    out.rows.push_back(std::move(row));
  }
  if (!header) throw std::runtime_error("cmdstan csv: no header row");
  if (out.at("method") != "sample") throw std::runtime_error("cmdstan csv: method is '" + out.at("method") + "', not sample");
  const long num_samples = std::stol(out.at("num_samples")), thin = std::stol(out.at("thin"));
  const auto rows = static_cast<long>(out.rows.size());
  if (thin < 1 || (cut_short ? num_samples / thin < rows : num_samples / thin != rows))
    throw std::runtime_error("cmdstan csv: num_samples " + std::to_string(num_samples) + " / thin " + std::to_string(thin) +
                             " is not the " + std::to_string(out.rows.size()) + " draws of the file");
  return out;
}

}  // namespace privpost::test
