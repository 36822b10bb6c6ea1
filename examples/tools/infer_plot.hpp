// privpost-infer --plot FILE.png: per parameter, the trace of every chain of the noise-aware method
// and its marginal density (a Gaussian kernel density estimate), with the naive posterior's density overlaid when
// --compare-naive ran. Drawn by gnuplot (plot.hpp); at most max_plotted_parameters parameters (the first ones), saying
// so when there are more.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <privpost/inference/infer.hpp>

#include "mpi_job.hpp"
#include "plot.hpp"

namespace privpost::tools {

/// The most parameters one --plot picture shows.
inline constexpr Eigen::Index max_plotted_parameters = 20;

/// A Gaussian kernel density estimate of x on `grid` (Silverman's rule of thumb: h = 0.9 min(sd, IQR / 1.34) n^-1/5,
/// from at most 4000 evenly spaced draws); a point mass (h = 0) gives a spike of width 1e-9.
inline Eigen::VectorXd kernel_density(const Eigen::VectorXd& all, const Eigen::VectorXd& grid) {
  const Eigen::Index step = std::max<Eigen::Index>(1, all.size() / 4000);
  std::vector<double> x;
  for (Eigen::Index i = 0; i < all.size(); i += step) x.push_back(all(i));
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(x.size());
  double mean = 0.0;
  for (const double v : x) mean += v / n;
  double ss = 0.0;
  for (const double v : x) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / std::max(1.0, n - 1.0));
  const double iqr = sorted[static_cast<std::size_t>(0.75 * (n - 1))] - sorted[static_cast<std::size_t>(0.25 * (n - 1))];
  double h = 0.9 * std::min(sd, iqr > 0.0 ? iqr / 1.34 : sd) * std::pow(n, -0.2);
  if (!(h > 0.0)) h = 1e-9;
  Eigen::VectorXd out = Eigen::VectorXd::Zero(grid.size());
  const double norm = 1.0 / (n * h * std::sqrt(2.0 * 3.14159265358979323846));
  for (Eigen::Index k = 0; k < grid.size(); ++k) {
    double s = 0.0;
    for (const double v : x) {
      const double u = (grid(k) - v) / h;
      s += std::exp(-0.5 * u * u);
    }
    out(k) = s * norm;
  }
  return out;
}

/// Writes FILE.dat and FILE.gp and draws FILE.png: traces and densities of results.front() (the noise-aware method),
/// with the density of the method named "naive" overlaid when present. names label the parameters.
inline void write_infer_plot(const std::vector<std::pair<std::string, privpost::inference_result>>& results,
                             const std::vector<std::string>& names, const std::string& png, const std::string& title) {
  if (!output_rank()) return;  // rank 0 of an MPI job draws
  const plot_files files = plot_paths(png);
  if (results.empty()) throw std::invalid_argument("--plot: no posterior to draw");
  const auto& main = results.front().second;
  const privpost::inference_result* naive = nullptr;
  for (const auto& [m, r] : results)
    if (m == "naive") naive = &r;
  const Eigen::Index shown = std::min(main.draws.dimension(), max_plotted_parameters);
  if (shown < main.draws.dimension())
    std::fprintf(stderr, "privpost-infer: --plot shows the first %lld of %lld parameters\n", static_cast<long long>(shown),
                 static_cast<long long>(main.draws.dimension()));
  std::ofstream data(files.data);
  if (!data) throw std::runtime_error("cannot open '" + files.data + "' for writing");
  data.precision(10);
  const Eigen::Index chains = main.draws.num_chains();
  for (Eigen::Index j = 0; j < shown; ++j) {
    const Eigen::MatrixXd trace = main.draws.chain_matrix(j);  // draws x chains
    data << "# " << names[static_cast<std::size_t>(j)] << ": draw, then one column per chain\n";
    for (Eigen::Index i = 0; i < trace.rows(); ++i) {
      data << i + 1;
      for (Eigen::Index c = 0; c < chains; ++c) data << ' ' << trace(i, c);
      data << '\n';
    }
    data << "\n\n";
    const Eigen::VectorXd x = main.draws.draws(j);
    double lo = x.minCoeff(), hi = x.maxCoeff();
    Eigen::VectorXd y;
    if (naive) {
      y = naive->draws.draws(j);
      lo = std::min(lo, y.minCoeff());
      hi = std::max(hi, y.maxCoeff());
    }
    const double pad = 0.1 * std::max(hi - lo, 1e-9 * std::max(1.0, std::abs(hi)));
    const Eigen::VectorXd grid = Eigen::VectorXd::LinSpaced(200, lo - pad, hi + pad);
    const Eigen::VectorXd f = kernel_density(x, grid);
    const Eigen::VectorXd fn = naive ? kernel_density(y, grid) : Eigen::VectorXd::Zero(grid.size());
    data << "# " << names[static_cast<std::size_t>(j)] << ": x, noise-aware density, naive density\n";
    for (Eigen::Index k = 0; k < grid.size(); ++k) data << grid(k) << ' ' << f(k) << ' ' << fn(k) << '\n';
    data << "\n\n";
  }
  data.close();
  if (!data) throw std::runtime_error("error writing '" + files.data + "'");

  std::ofstream gp(files.script);
  if (!gp) throw std::runtime_error("cannot open '" + files.script + "' for writing");
  gp << "# privpost-infer --plot: gnuplot " << files.script << " draws " << files.png << "\n"
     << "set terminal png size 900," << 220 * shown + 40 << "\n"
     << "set output " << gnuplot_quoted(files.png) << "\n"
     << "set multiplot layout " << shown << ",2 title " << gnuplot_quoted(title) << "\n"
     << "set key top right\nset tics font ',8'\n";
  // About four labelled ticks on the traces' draw axis: the smallest of 1, 2, 5 times a power of ten >= draws / 4.
  const double tick = [rows = static_cast<double>(main.draws.draws_per_chain())] {
    for (double p10 = 1.0;; p10 *= 10.0)
      for (const double m : {1.0, 2.0, 5.0})
        if (m * p10 * 4.0 >= rows) return m * p10;
  }();
  for (Eigen::Index j = 0; j < shown; ++j) {
    const std::string name = names[static_cast<std::size_t>(j)];
    gp << "set title " << gnuplot_quoted(name + ": trace of each chain")
       << "\nset xlabel 'kept draw'\nset key outside right top\nset xtics " << tick << "\nplot ";
    for (Eigen::Index c = 0; c < chains; ++c)
      gp << (c == 0 ? "" : ", ") << gnuplot_quoted(files.data) << " index " << 2 * j << " using 1:" << c + 2
         << " with lines title " << gnuplot_quoted("chain " + std::to_string(c + 1));
    gp << "\nset key inside top right\nset xtics autofreq\nset title " << gnuplot_quoted(name + ": marginal density")
       << "\nset xlabel " << gnuplot_quoted(name) << "\nplot " << gnuplot_quoted(files.data) << " index " << 2 * j + 1
       << " using 1:2 with lines lw 2 lc rgb '#1f4e9c' title " << gnuplot_quoted(results.front().first);
    if (naive) gp << ", '' index " << 2 * j + 1 << " using 1:3 with lines lw 2 dt 2 lc rgb '#c0392b' title 'naive'";
    gp << "\n";
  }
  gp << "unset multiplot\n";
  gp.close();
  if (!gp) throw std::runtime_error("error writing '" + files.script + "'");
  draw_plot(files, "privpost-infer");
}

}  // namespace privpost::tools
