// privpost-release for logistic and Poisson regression records (models logistic, poisson-glm).
#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <privpost/privpost.hpp>

#include "release_tool.hpp"

namespace privpost::tools::release_tool {

// DP-GLM (docs/design-glm.md): the PASS-GLM order-2 statistics of admitted records under the analytic Gaussian
// mechanism with the exact L2 sensitivity for the declared bounds (or, with --mechanism laplace, the Laplace mechanism
// with glm_statistic::l1_sensitivity). Logistic: [y x~; t2(x~)], Lemma 3.3 (with the
// intercept's inner products); responses 0/1 or -1/+1, or text with --positive LABEL (LABEL -> +1, any other value ->
// -1). Poisson: [x; t2(x); y x~; y t2(x)] (intercept pairs of the t2 blocks left out, glm_statistic), the exact bound of
// docs/design-glm.md Sec. 2.3 at sqrt(c^2 + R^2); counts integers >= 0, clamped to the declared --y-bound. Covariates either
// declared per column (--x-bounds: clamped into [lo, hi], mapped to [-1, 1] / sqrt(d), so ||x|| <= 1) or raw with a declared norm
// bound (--radius R: records longer than R scaled onto the ball). A covariate named column=LEVEL is the indicator of a text
// column's level (declare its range 0,1). Every record is kept: n is public.
privpost::tools::release_record make_glm_release(const options& o) {
  using namespace privpost;
  // Responses are counts with a declared bound (--y-bound) or labels (the model's glm_kind, glm_tool.hpp).
  const bool counts = tools::glm_counts(o.model);
  const std::string& model = o.model;
  if (o.covariates.empty() || o.response.empty())
    throw std::invalid_argument(model + " needs --covariates a,b,... and --response y");
  if (o.x_bounds.empty() == !o.radius.has_value())
    throw std::invalid_argument(
        model +
        " needs exactly one of --x-bounds (declared ranges: lo,hi for every covariate, or lo1,hi1,lo2,hi2,... "
        "one pair per covariate) and --radius R (raw covariates, norm bound R)");
  // Gaussian unless --mechanism laplace is given (the paper's mechanism; Laplace is inferred by collapsed Gibbs).
  const bool laplace = o.mechanism_given && o.mechanism == "laplace";
  if (o.lower || o.upper || !o.y_bounds.empty() || o.noisy_moments)
    throw std::invalid_argument("--lower/--upper/--y-bounds/--noisy-moments do not apply to the " + model + " model");
  if (counts && !o.y_bound)
    throw std::invalid_argument(model + " needs --y-bound R_y: the declared largest count (larger counts are clamped)");
  if (counts && !(std::isfinite(*o.y_bound) && *o.y_bound >= 1.0))
    throw std::invalid_argument("--y-bound is " + std::to_string(*o.y_bound) + "; accepted: a finite number >= 1");
  auto r = tools::release_record::of_model(model);
  auto& declared = r.glm();
  r.mechanism = laplace ? "laplace" : "gaussian";
  r.version = privpost::version_string;
  declared.covariates = tools::split_list(o.covariates, "--covariates");
  declared.response = o.response;
  declared.intercept = !o.no_intercept;
  declared.intercept_value = 1.0;
  declared.positive_label = o.positive;
  r.policy = "clamp";
  const int d = static_cast<int>(declared.covariates.size());
  if (d < 1 || d > 64) throw std::invalid_argument("--covariates: " + std::to_string(d) + " names; accepted: 1 to 64");
  if (!o.x_bounds.empty()) {
    const auto v = parse_numbers(o.x_bounds, "--x-bounds");
    if (v.size() != 2 && v.size() != 2 * static_cast<std::size_t>(d))
      throw std::invalid_argument("--x-bounds has " + std::to_string(v.size()) +
                                  " numbers; accepted: 2 (one range for every covariate) or " + std::to_string(2 * d) +
                                  " (lo,hi per covariate)");
    for (int k = 0; k < d; ++k) {
      const std::size_t at = v.size() == 2 ? 0 : 2 * static_cast<std::size_t>(k);
      if (!(v[at] < v[at + 1]))
        throw std::invalid_argument("--x-bounds: covariate '" + declared.covariates[static_cast<std::size_t>(k)] + "' has lo " +
                                    std::to_string(v[at]) + " >= hi " + std::to_string(v[at + 1]) + "; accepted: lo < hi");
      declared.covariate_bounds.emplace_back(v[at], v[at + 1]);
    }
    declared.glm_scale = "unit_ball";
    declared.radius = 1.0;
  } else {
    if (!(std::isfinite(*o.radius) && *o.radius > 0))
      throw std::invalid_argument("--radius is " + std::to_string(*o.radius) + "; accepted: a finite number > 0");
    declared.glm_scale = "raw";
    declared.radius = *o.radius;
  }
  const std::optional<double> c = declared.intercept ? std::optional<double>(declared.intercept_value) : std::nullopt;
  if (counts) declared.y_bound = *o.y_bound;
  const auto statistic = tools::glm_statistic_of(model, d, declared.radius, declared.y_bound, c);
  const std::string input = shard_path(o.input);
  // This process's records (its shard under mpirun) and its part of the statistic, summed exactly (release_tool.hpp).
  shard_sums part = read_shard([&] {
    std::vector<std::vector<double>> columns;
    for (const auto& name : declared.covariates) {
      // "column=LEVEL": the indicator of a text column's level (1 where the cell is LEVEL, else 0).
      const auto eq = name.find('=');
      if (eq == std::string::npos) {
        columns.push_back(tools::read_csv_column(input, name, shard_rows()));
        continue;
      }
      const std::string column = name.substr(0, eq), level = name.substr(eq + 1);
      if (column.empty() || level.empty())
        throw std::invalid_argument("--covariates: '" + name + "'; accepted: a column name, or column=LEVEL (an indicator)");
      std::vector<double> indicator;
      for (const auto& cell : tools::read_csv_cells(input, column, shard_rows()))
        indicator.push_back(cell.second == level ? 1.0 : 0.0);
      columns.push_back(std::move(indicator));
    }
    std::vector<double> y;
    long clamped_y = 0;
    for (const auto& [line, cell] : tools::read_csv_cells(input, o.response, shard_rows())) {
      if (!counts && !o.positive.empty()) {
        y.push_back(cell == o.positive ? 1.0 : -1.0);
        continue;
      }
      const bool number = tools::is_decimal_number(cell);
      const double v = number ? std::strtod(cell.c_str(), nullptr) : 0.0;
      if (counts) {
        if (!number || !(std::isfinite(v) && v >= 0.0 && v == std::floor(v)))
          throw std::invalid_argument("CSV line " + std::to_string(line) + ": response '" + tools::echo(cell) +
                                      "'; accepted: a count (an integer >= 0)");
        if (v > declared.y_bound) ++clamped_y;
      } else if (!number || !(v == 0.0 || v == 1.0 || v == -1.0)) {
        throw std::invalid_argument("CSV line " + std::to_string(line) + ": response '" + tools::echo(cell) +
                                    "'; accepted: 0, 1, -1 (or text labels with --positive LABEL)");
      }
      y.push_back(v);
    }
    shard_sums p(static_cast<std::size_t>(statistic.size()));
    Eigen::VectorXd x(d), contribution(statistic.size());
    long clamped = 0, clipped = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      for (int k = 0; k < d; ++k) {
        const double v = columns[static_cast<std::size_t>(k)][i];
        if (declared.glm_scale == "unit_ball") {
          const auto& b = declared.covariate_bounds[static_cast<std::size_t>(k)];
          if (v < b.first || v > b.second) ++clamped;
          x(k) = scale_to_declared_range(v, b.first, b.second, d);
        } else {
          x(k) = v;
        }
      }
      if (x.norm() > declared.radius) ++clipped;
      contribution.setZero();
      statistic.add_record(x, y[i], contribution);  // admission: scaled onto the ball, counts clamped to R_y
      p.add(contribution);
    }
    p.records = static_cast<double>(y.size());
    p.audit = {static_cast<double>(clamped), static_cast<double>(clipped), static_cast<double>(clamped_y)};
    return p;
  });
  const Eigen::VectorXd s = combine(part);  // every rank's part; the ranks other than 0 stop here
  r.n = part.records;
  const auto clamped = static_cast<long>(part.audit[0]), clipped = static_cast<long>(part.audit[1]),
             clamped_y = static_cast<long>(part.audit[2]);
  declared.statistic_names = statistic.names(declared.covariates);  // the data's column names instead of x1..xd
  if (laplace) {
    const laplace_mechanism m(statistic.l1_sensitivity(), o.epsilon);
    r.sensitivity = statistic.l1_sensitivity();
    r.noise = m.scale();
    declared.sensitivity_rule = "L1: min(sqrt(D) x L2 bound, sum of the blocks' largest changes) (glm_statistic::l1_sensitivity)";
    release_into(r, m, s);
  } else {
    const auto m = gaussian_mechanism::analytic(statistic.l2_sensitivity(), o.epsilon, o.delta);
    r.sensitivity = statistic.l2_sensitivity();
    r.noise = m.sigma();
    r.calibration = "analytic";
    declared.sensitivity_rule =
        tools::visit_glm(model, [&]<class M>(std::type_identity<M>) { return M::sensitivity_rule(declared.intercept); });
    release_into(r, m, s);
  }
  if (declared.glm_scale == "unit_ball")
    std::cerr << "privpost-release: covariates mapped to [-1, 1] / sqrt(" << d << ") by their declared ranges; " << clamped
              << " value(s) clamped into a range\n";
  else
    std::cerr << "privpost-release: " << clipped << " record(s) longer than the radius " << declared.radius
              << " scaled onto the ball\n";
  if (counts)
    std::cerr << "privpost-release: " << clamped_y << " count(s) clamped to the declared y-bound " << declared.y_bound << "\n";
  std::cerr << "privpost-release: " << model << " statistic " << (laplace ? "L1" : "L2") << " sensitivity " << r.sensitivity
            << " (" << declared.sensitivity_rule << ")\n";
  return r;
}

}  // namespace privpost::tools::release_tool
