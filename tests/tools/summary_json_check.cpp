// privpost_summary_json_check SUMMARY_JSON DRAWS_CSV: checks privpost-infer --format json against
// --draws-csv of the same run. The document must parse; name the release's model and the run's settings; hold one entry
// per method of the draws CSV, with its chains and draws, the numerical events, a warnings list, and per parameter (in
// the draws CSV's order and names) a mean and sd equal to those of the draws (relative 1e-12), ordered quantiles inside
// the draws' range, R-hat, bulk and tail ESS, and a Monte Carlo standard error in (0, sd). Prints "ok" or the first
// difference (exit status 1).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream in(s);
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b)); }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SUMMARY_JSON DRAWS_CSV\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream js(argv[1]);
    if (!js) throw std::runtime_error(std::string("cannot open ") + argv[1]);
    const nlohmann::json doc = nlohmann::json::parse(js);  // throws on anything but one JSON document
    std::ifstream csv(argv[2]);
    if (!csv) throw std::runtime_error(std::string("cannot open ") + argv[2]);
    std::string line;
    std::getline(csv, line);
    const auto header = split(line);
    const std::vector<std::string> names(header.begin() + 3, header.end());
    std::map<std::string, std::vector<std::vector<double>>> draws;  // method -> parameter -> draws
    std::map<std::string, std::map<int, int>> per_chain;
    while (std::getline(csv, line)) {
      const auto f = split(line);
      auto& d = draws[f[0]];
      d.resize(names.size());
      for (std::size_t j = 0; j < names.size(); ++j) d[j].push_back(std::strtod(f[j + 3].c_str(), nullptr));
      ++per_chain[f[0]][std::stoi(f[1])];
    }
    if (!doc.at("release").at("model").is_string()) throw std::runtime_error("release.model is not a string");
    for (const char* k : {"chains", "draws", "burnin", "thin", "seed", "method"}) (void)doc.at("settings").at(k);
    const auto& methods = doc.at("methods");
    if (methods.size() != draws.size())
      throw std::runtime_error(std::to_string(methods.size()) + " methods, the draws CSV has " + std::to_string(draws.size()));
    for (const auto& m : methods) {
      const std::string method = m.at("method").get<std::string>();
      auto fail = [&](const std::string& what) { throw std::runtime_error(method + ": " + what); };
      if (!draws.count(method)) fail("not in the draws CSV");
      if (m.at("chains").get<std::size_t>() != per_chain[method].size()) fail("chains");
      if (m.at("draws_per_chain").get<int>() != per_chain[method].begin()->second) fail("draws_per_chain");
      if (!m.at("warnings").is_array() || !m.at("numerical_events").is_object() || !m.at("title").is_string())
        fail("warnings, numerical_events or title missing");
      const auto& ps = m.at("parameters");
      if (ps.size() != names.size()) fail("parameter count");
      for (std::size_t j = 0; j < names.size(); ++j) {
        const auto& p = ps[j];
        const auto& x = draws[method][j];
        if (p.at("name") != names[j]) fail("parameter " + std::to_string(j) + " is " + p.at("name").dump());
        double mean = 0.0;
        for (const double v : x) mean += v;
        mean /= static_cast<double>(x.size());
        double ss = 0.0;
        for (const double v : x) ss += (v - mean) * (v - mean);
        const double sd = std::sqrt(ss / static_cast<double>(x.size() - 1));
        if (!close(p.at("mean").get<double>(), mean)) fail(names[j] + ": mean " + p.at("mean").dump());
        if (!close(p.at("sd").get<double>(), sd)) fail(names[j] + ": sd " + p.at("sd").dump());
        const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
        double previous = *lo;
        for (const char* q : {"q5", "q25", "q50", "q75", "q95"}) {
          const double v = p.at("quantiles").at(q).get<double>();
          if (v < previous || v > *hi) fail(names[j] + ": quantile " + q + " out of order");
          previous = v;
        }
        for (const char* k : {"rhat", "ess_bulk", "ess_tail"})
          if (!(p.at(k).is_number() && p.at(k).get<double>() > 0.0)) fail(names[j] + ": " + k + " " + p.at(k).dump());
        const double mcse = p.at("mcse_mean").get<double>();
        if (!(mcse > 0.0 && mcse < sd)) fail(names[j] + ": mcse_mean " + p.at("mcse_mean").dump());
      }
    }
    std::printf("summary json check: ok, %zu methods, %zu parameters, model %s\n", methods.size(), names.size(),
                doc.at("release").at("model").get<std::string>().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "summary json check: %s\n", e.what());
    return 1;
  }
}
