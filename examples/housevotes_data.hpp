// The 1984 House votes data (examples/data/housevotes84.csv, from R's mlbench) as a matrix of states, for the examples
// that model them: examples/housevotes_cgm.cpp and examples/housevotes_marginals.cpp.
#pragma once

#include <Eigen/Core>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace privpost::examples {

// Columns: Class (democrat 0, republican 1), V1..V16 (n 0, y 1, empty 2 = missing).
inline Eigen::MatrixXi read_votes(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot open " + path + " (pass --csv FILE)");
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<int>> rows;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, ',')) fields.push_back(field);
    if (line.back() == ',') fields.emplace_back();
    if (fields.size() != 17)
      throw std::invalid_argument(path + " line " + std::to_string(number) + ": " + std::to_string(fields.size()) +
                                  " fields, expected 17 (Class, V1..V16)");
    std::vector<int> row(17);
    if (fields[0] == "democrat") {
      row[0] = 0;
    } else if (fields[0] == "republican") {
      row[0] = 1;
    } else {
      throw std::invalid_argument(path + " line " + std::to_string(number) + ": Class '" + fields[0] +
                                  "', expected democrat or republican");
    }
    for (int j = 1; j < 17; ++j) {
      const std::string& v = fields[static_cast<std::size_t>(j)];
      if (v == "n") {
        row[static_cast<std::size_t>(j)] = 0;
      } else if (v == "y") {
        row[static_cast<std::size_t>(j)] = 1;
      } else if (v.empty()) {
        row[static_cast<std::size_t>(j)] = 2;
      } else {
        throw std::invalid_argument(path + " line " + std::to_string(number) + ": vote '" + v + "', expected y, n or empty");
      }
    }
    rows.push_back(row);
  }
  Eigen::MatrixXi x(static_cast<Eigen::Index>(rows.size()), 17);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (int j = 0; j < 17; ++j) x(static_cast<Eigen::Index>(r), j) = rows[r][static_cast<std::size_t>(j)];
  return x;
}

}  // namespace privpost::examples
