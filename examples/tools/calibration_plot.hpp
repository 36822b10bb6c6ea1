// privpost-calibrate --plot FILE.png: how the simulation-based-calibration community reads
// calibration (Saeilynoja, Buerkner & Vehtari 2022). One row of panels per method and parameter coordinate: the
// ECDF-difference plot of the true parameter's posterior quantiles, F(z) - z, inside the simultaneous 95% band for
// uniform values (privpost/diagnostics/ecdf_band.hpp), and the quantiles' histogram with the expected count per bin.
// A calibrated method's curve stays inside the band; a curve above it in the middle means the posterior is too wide
// there, a hump means bias.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <privpost/diagnostics/ecdf_band.hpp>
#include <privpost/inference/calibration_study.hpp>

#include "plot.hpp"

namespace privpost::tools {

/// Writes FILE.dat and FILE.gp for the rows' quantiles and draws FILE.png with gnuplot (plot.hpp); `title` heads the
/// picture. The band is simulated (2000 samples) from an engine seeded with `seed`, so the picture is reproducible.
/// Returns, per row, whether its ECDF stays inside the band.
inline std::vector<bool> write_calibration_plot(const calibration_accumulator& acc, const std::vector<calibration_row>& rows,
                                                const std::string& png, std::uint64_t seed, const std::string& title) {
  const plot_files files = plot_paths(png);
  if (rows.empty()) throw std::invalid_argument("--plot: no calibration rows to draw");
  const int n = rows.front().trials;
  std::mt19937_64 g(seed ^ 0x65636466ULL);
  const ecdf_band band = uniform_ecdf_band(n, std::min(n, 100), 0.95, 2000, g);
  const int bins = std::clamp(n / 10, 5, 20);
  std::ofstream data(files.data);
  if (!data) throw std::runtime_error("cannot open '" + files.data + "' for writing");
  data.precision(10);
  std::vector<bool> inside;
  for (const auto& r : rows) {
    const std::vector<double>& q = acc.quantiles(r.method, r.parameter);
    if (static_cast<int>(q.size()) != n) throw std::invalid_argument("--plot: the rows have different numbers of trials");
    inside.push_back(inside_band(band, q));
    const Eigen::VectorXd f = ecdf_at(std::span<const double>(q), band.z);
    data << "# " << r.method << " parameter " << r.parameter << ": z, ECDF - z, band lower - z, band upper - z\n0 0 0 0\n";
    for (Eigen::Index i = 0; i < band.z.size(); ++i)
      data << band.z(i) << ' ' << f(i) - band.z(i) << ' ' << band.lower(i) - band.z(i) << ' ' << band.upper(i) - band.z(i)
           << '\n';
    data << "1 0 0 0\n\n\n";
    std::vector<int> counts(static_cast<std::size_t>(bins), 0);
    for (const double x : q) ++counts[static_cast<std::size_t>(std::clamp(static_cast<int>(x * bins), 0, bins - 1))];
    data << "# " << r.method << " parameter " << r.parameter << ": bin centre, count\n";
    for (int b = 0; b < bins; ++b) data << (b + 0.5) / bins << ' ' << counts[static_cast<std::size_t>(b)] << '\n';
    data << "\n\n";
  }
  data.close();
  if (!data) throw std::runtime_error("error writing '" + files.data + "'");

  std::ofstream gp(files.script);
  if (!gp) throw std::runtime_error("cannot open '" + files.script + "' for writing");
  const auto panels = rows.size();
  gp << "# privpost-calibrate --plot: gnuplot " << files.script << " draws " << files.png << "\n"
     << "set terminal png size 900," << 260 * panels + 40 << "\n"
     << "set output " << gnuplot_quoted(files.png) << "\n"
     << "set multiplot layout " << panels << ",2 title " << gnuplot_quoted(title) << "\n"
     << "set key off\nset xrange [0:1]\nset style fill solid 0.5 noborder\nset boxwidth " << 1.0 / bins << "\n";
  for (std::size_t p = 0; p < panels; ++p) {
    const auto& r = rows[p];
    const std::string name = r.method + " [" + std::to_string(r.parameter) + "]";
    gp << "set title " << gnuplot_quoted(name + ": ECDF - z, 95% band (" + (inside[p] ? "inside" : "LEAVES it") + ")")
       << "\nset xlabel 'z: posterior quantile of the true value'\nset yrange [*:*]\n"
       << "plot " << gnuplot_quoted(files.data) << " index " << 2 * p
       << " using 1:3:4 with filledcurves lc rgb '#c8c8c8', '' index " << 2 * p
       << " using 1:2 with lines lw 2 lc rgb '#1f4e9c', 0 with lines lc rgb 'black'\n"
       << "set title " << gnuplot_quoted(name + ": histogram of z (line: expected)") << "\nset yrange [0:*]\n"
       << "plot " << gnuplot_quoted(files.data) << " index " << 2 * p + 1 << " using 1:2 with boxes lc rgb '#1f4e9c', "
       << static_cast<double>(n) / bins << " with lines lw 2 lc rgb 'black'\n";
  }
  gp << "unset multiplot\n";
  gp.close();
  if (!gp) throw std::runtime_error("error writing '" + files.script + "'");
  draw_plot(files, "privpost-calibrate");
  return inside;
}

}  // namespace privpost::tools
