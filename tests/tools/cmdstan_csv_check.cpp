// privpost_cmdstan_csv_check DRAWS_CSV DIR: checks privpost-infer's --output-dir files against its --draws-csv file of
// the same run, with the independent reader of tests/support/cmdstan_csv.hpp. Every (method, chain)
// of the draws CSV must have DIR/<method>_<chain + 1>.csv, and DIR nothing else; each file must read as CmdStan CSV,
// say its algorithm and chain id, name its parameter columns theta.1 ... theta.D with the draws CSV's names, and hold
// the same draws bit for bit. Prints "ok" with the files' header rows, or the first difference (exit status 1).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support/cmdstan_csv.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DRAWS_CSV DIR\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream draws(argv[1]);
    if (!draws) throw std::runtime_error(std::string("cannot open ") + argv[1]);
    std::string line;
    std::getline(draws, line);
    auto header = privpost::test::detail::split_commas(line);
    if (header.size() < 4 || header[0] != "method" || header[1] != "chain" || header[2] != "draw")
      throw std::runtime_error("not a privpost draws CSV: " + line);
    const std::vector<std::string> names(header.begin() + 3, header.end());
    std::map<std::pair<std::string, int>, std::vector<std::vector<double>>> expected;
    while (std::getline(draws, line)) {
      const auto f = privpost::test::detail::split_commas(line);
      if (f.size() != header.size()) throw std::runtime_error("draws CSV row of the wrong length: " + line);
      std::vector<double> row;
      for (std::size_t j = 3; j < f.size(); ++j) row.push_back(std::strtod(f[j].c_str(), nullptr));
      expected[{f[0], std::stoi(f[1])}].push_back(std::move(row));
    }
    std::set<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(argv[2])) files.insert(e.path().filename().string());
    std::size_t total = 0;
    std::map<std::string, std::string> headers;
    for (const auto& [key, rows] : expected) {
      const std::string file = key.first + "_" + std::to_string(key.second + 1) + ".csv";
      if (files.erase(file) == 0) throw std::runtime_error("no file " + file + " in " + argv[2]);
      std::ifstream in(std::filesystem::path(argv[2]) / file);
      const auto csv = privpost::test::read_cmdstan_csv(in);
      auto fail = [&](const std::string& what) { throw std::runtime_error(file + ": " + what); };
      if (csv.at("algorithm") != key.first) fail("algorithm " + csv.at("algorithm"));
      if (csv.at("id") != std::to_string(key.second + 1)) fail("id " + csv.at("id"));
      if (csv.columns.size() != csv.sampler_columns + names.size()) fail("wrong number of parameter columns");
      for (std::size_t j = 0; j < names.size(); ++j) {
        const std::string stan = "theta." + std::to_string(j + 1);
        if (csv.columns[csv.sampler_columns + j] != stan) fail("column " + csv.columns[csv.sampler_columns + j]);
        if (csv.at(stan) != names[j]) fail(stan + " is labelled '" + csv.at(stan) + "', not '" + names[j] + "'");
      }
      if (csv.rows.size() != rows.size()) fail(std::to_string(csv.rows.size()) + " draws, not " + std::to_string(rows.size()));
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = 0; j < names.size(); ++j)
          if (csv.rows[i][csv.sampler_columns + j] != rows[i][j])
            fail("draw " + std::to_string(i) + ", " + names[j] + " differs from the draws CSV");
      total += rows.size();
      std::string h;
      for (const auto& c : csv.columns) h += (h.empty() ? "" : ",") + c;
      headers[key.first] = h;
    }
    if (!files.empty()) throw std::runtime_error("unexpected file " + *files.begin() + " in " + argv[2]);
    std::printf("cmdstan csv check: ok, %zu files, %zu draws\n", expected.size(), total);
    for (const auto& [method, h] : headers) std::printf("  %s: %s\n", method.c_str(), h.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cmdstan csv check: %s\n", e.what());
    return 1;
  }
}
