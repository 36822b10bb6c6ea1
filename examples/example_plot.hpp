// --plot FILE.png for the examples that compare methods: each parameter's marginal posterior
// density under every method, overlaid (one panel per parameter, two panels a row), drawn by gnuplot through the
// tools' helpers (tools/plot.hpp writes FILE.dat and FILE.gp beside the picture and says how to get gnuplot when it
// is missing; tools/infer_plot.hpp has the kernel density estimate).
#pragma once

#include <Eigen/Core>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <privpost/inference/posterior.hpp>

#include "tools/infer_plot.hpp"
#include "tools/plot.hpp"

namespace privpost::examples {

/// "--plot FILE.png" among the arguments (also removed from them, so the example's own parsing does not see it);
/// empty when absent. std::invalid_argument for a name that is not a .png file.
inline std::string take_plot_argument(int& argc, char** argv) {
  std::string png;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--plot") == 0 && i + 1 < argc) {
      png = argv[++i];
      (void)privpost::tools::plot_paths(png);
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  return png;
}

/// Draws the marginal densities of coordinates 0 .. names.size() - 1 of every (method, posterior) into png.
inline void plot_densities(const std::string& png, const std::string& title,
                           const std::vector<std::pair<std::string, const privpost::posterior*>>& methods,
                           const std::vector<std::string>& names) {
  const auto files = privpost::tools::plot_paths(png);
  if (methods.empty() || names.empty()) throw std::invalid_argument("plot_densities: nothing to draw");
  std::ofstream data(files.data);
  if (!data) throw std::runtime_error("cannot open '" + files.data + "' for writing");
  data.precision(10);
  for (std::size_t j = 0; j < names.size(); ++j) {
    const auto col = static_cast<Eigen::Index>(j);
    double lo = methods.front().second->draws(col).minCoeff(), hi = methods.front().second->draws(col).maxCoeff();
    for (const auto& [name, p] : methods) {
      lo = std::min(lo, p->draws(col).minCoeff());
      hi = std::max(hi, p->draws(col).maxCoeff());
    }
    const double pad = 0.1 * std::max(hi - lo, 1e-9);
    const Eigen::VectorXd grid = Eigen::VectorXd::LinSpaced(200, lo - pad, hi + pad);
    std::vector<Eigen::VectorXd> f;
    for (const auto& [name, p] : methods) f.push_back(privpost::tools::kernel_density(p->draws(col), grid));
    data << "# " << names[j] << ": x, then the density of each method\n";
    for (Eigen::Index k = 0; k < grid.size(); ++k) {
      data << grid(k);
      for (const auto& v : f) data << ' ' << v(k);
      data << '\n';
    }
    data << "\n\n";
  }
  data.close();
  const std::size_t rows = (names.size() + 1) / 2;
  std::ofstream gp(files.script);
  if (!gp) throw std::runtime_error("cannot open '" + files.script + "' for writing");
  gp << "# gnuplot " << files.script << " draws " << files.png << "\nset terminal png size 900," << 300 * rows + 40
     << "\nset output " << privpost::tools::gnuplot_quoted(files.png) << "\nset multiplot layout " << rows << ","
     << (names.size() == 1 ? 1 : 2) << " title " << privpost::tools::gnuplot_quoted(title) << "\nset key top right\n";
  const char* colours[] = {"#1f4e9c", "#c0392b", "#27ae60", "#8e44ad", "#d35400"};
  for (std::size_t j = 0; j < names.size(); ++j) {
    gp << "set title " << privpost::tools::gnuplot_quoted(names[j] + ": marginal density") << "\nset xlabel "
       << privpost::tools::gnuplot_quoted(names[j]) << "\nplot ";
    for (std::size_t m = 0; m < methods.size(); ++m)
      gp << (m == 0 ? "" : ", ") << privpost::tools::gnuplot_quoted(files.data) << " index " << j << " using 1:" << m + 2
         << " with lines lw 2 lc rgb '" << colours[m % 5] << "' title " << privpost::tools::gnuplot_quoted(methods[m].first);
    gp << (j == 0 ? "\nunset key\n" : "\n");  // the first panel's key names the methods for all
  }
  gp << "unset multiplot\n";
  gp.close();
  if (!data || !gp) throw std::runtime_error("error writing the --plot files");
  privpost::tools::draw_plot(files, "privpost example");
}

}  // namespace privpost::examples
