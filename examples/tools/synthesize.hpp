// privpost-synthesize's output (see synthesize_main.cpp): after privpost-infer's noise-aware run of a release,
// m synthetic data sets of N records each, one CSV file per set, from m posterior draws spread over the chains
// (privpost/inference/synthetic.hpp). The records are the model's, on the data's own scale: 0/1 for the binomial, the
// category index for the multinomial, and for the unbounded families the model truncated to the declared bounds (the
// records the release was about: privpost-release dropped the others), by rejection with a bounded number of tries;
// for linear regression, the covariates and the response of the model with its covariate law, clamped into the
// declared box as privpost-release clamped the real records; for the logistic and Poisson GLMs, covariates from the
// model's covariate law moved into the declared ranges and the response given them; for contingency tables, cells
// drawn from the histogram posterior's cell probabilities, written as level names.
// Each file starts with '#' lines naming the release and saying that no further budget was spent; privpost-release
// reads such a file back (its CSV reader skips '#' lines before the header).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <privpost/privpost.hpp>

#include "csv.hpp"
#include "infer_options.hpp"
#include "output_file.hpp"
#include "release_record.hpp"

namespace privpost::tools::infer_tool {

// The column name as a CSV header field: quoted (with "" for a quote) when it holds a comma, a quote or spaces at its
// ends, as RFC 4180 and privpost's reader expect.
inline std::string csv_header_field(const std::string& name) {
  const bool quote = name.find_first_of(",\"") != std::string::npos || name.front() == ' ' || name.back() == ' ';
  if (!quote) return name;
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// One record of family F at parameter p inside [lower, upper] when the release declared bounds: redrawn until it
// falls inside, at most max_tries times (a posterior draw that puts almost no mass inside the bounds is refused
// rather than looped on).
template <class F, class P, class G>
double synthetic_record_inside(const P& p, const release_record& rec, G& g) {
  const auto& declared = rec.family();
  constexpr int max_tries = 100000;
  for (int t = 0; t < max_tries; ++t) {
    const double x = static_cast<double>(F::draw_record(p, g));
    if (!declared.has_bounds || (x >= declared.lower && x <= declared.upper)) return x;
  }
  throw std::domain_error("privpost-synthesize: a posterior draw of the " + rec.model + " model put no record inside the " +
                          "declared bounds [" + std::to_string(declared.lower) + ", " + std::to_string(declared.upper) + "] in " +
                          std::to_string(max_tries) + " tries");
}

// A synthetic value as written: rounded to --digits significant digits (round_significant, csv.hpp; whole numbers are
// kept) and kept inside [lo, hi], the bounds the release declared for its column: a bound with more digits than asked
// for can be crossed by the rounding alone. Without --digits the value is written exactly.
inline void write_synthetic_value(std::ostream& os, const options& o, double x,
                                  double lo = -std::numeric_limits<double>::infinity(),
                                  double hi = std::numeric_limits<double>::infinity()) {
  write_csv_number(os, std::clamp(round_significant(x, o.synthetic_digits), lo, hi));
}

// The synthetic sets' folder, created if missing.
inline void create_synthetic_dir(const options& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.synthetic_dir, ec);
  if (ec) throw std::runtime_error("privpost-synthesize: cannot create '" + o.synthetic_dir + "': " + ec.message());
}

// The '#' provenance lines of set k (0-based) drawn at posterior draw theta of run r, ending with a newline; `scale` is
// appended to the parameter line (where the draw is not on the data's scale).
inline std::string synthetic_provenance(const options& o, const release_record& rec, const privpost::inference_result& r, int k,
                                        const Eigen::VectorXd& theta, const std::string& scale = "") {
  std::ostringstream text;
  text << "# privpost-synthesize: synthetic data set " << k + 1 << " of " << o.synthetic_sets << ", " << o.synthetic_records
       << " records from the noise-aware posterior predictive (privpost " << privpost::version_string << ")\n";
  text << "# release: " << o.release << " (model " << rec.model << ", n " << rec.n << ", " << rec.mechanism
       << " mechanism, epsilon " << rec.epsilon;
  if (rec.delta > 0.0) text << ", delta " << rec.delta;
  text << "); no further privacy budget was spent (post-processing of the release)\n";
  text << "# posterior draw " << k + 1 << " of " << o.synthetic_sets << " spread over " << r.draws.num_chains() << " chains x "
       << r.draws.draws_per_chain() << " draws, seed " << o.seed << "; parameter";
  for (Eigen::Index j = 0; j < theta.size(); ++j) text << (j ? "," : " ") << theta(j);
  text << scale << '\n';
  if (o.synthetic_digits > 0)
    text << "# values that are not whole numbers rounded to " << o.synthetic_digits
         << " significant digits (--digits), inside the declared bounds\n";
  return text.str();
}

// The file synthetic_<k + 1>.csv of the folder, written whole or not at all.
inline void commit_synthetic_set(const options& o, int k, const std::string& text) {
  const std::string path = (std::filesystem::path(o.synthetic_dir) / ("synthetic_" + std::to_string(k + 1) + ".csv")).string();
  privpost::tools::output_file(path).commit(text);
}

// The closing line of a run.
inline void report_synthetic_sets(const options& o) {
  std::printf(
      "\nprivpost-synthesize: wrote %d synthetic data set%s of %lld records to %s (synthetic_1.csv ...); no further "
      "privacy budget was spent\n",
      o.synthetic_sets, o.synthetic_sets == 1 ? "" : "s", static_cast<long long>(o.synthetic_records), o.synthetic_dir.c_str());
  if (o.synthetic_sets == 1)
    std::fprintf(stderr,
                 "privpost-synthesize: WARNING: one synthetic data set analysed as if it were the data gives intervals far "
                 "too narrow (a nominal 90%% interval covered 24%% of the time in the library's test); write m >= 2 sets "
                 "and combine them (privpost::combine_fully_synthetic, docs/synthetic-data.md)\n");
}

// The records' engine: seeded from the run's seed, apart from the chains' engines.
inline std::mt19937_64 synthetic_engine(const options& o) { return privpost::chain_engine(o.seed, 1 << 20); }

// Writes o.synthetic_sets files synthetic_<k>.csv into o.synthetic_dir from the noise-aware run r with this prior.
template <class F, class Prior>
void write_synthetic_sets(const options& o, const release_record& rec, const privpost::inference_result& r, const Prior& prior) {
  const auto draws = privpost::synthetic_parameter_draws(r.draws, o.synthetic_sets);
  create_synthetic_dir(o);
  auto g = synthetic_engine(o);
  const std::string column = rec.family().column.empty() ? "x" : rec.family().column;
  for (int k = 0; k < o.synthetic_sets; ++k) {
    const Eigen::VectorXd& theta = draws[static_cast<std::size_t>(k)];
    std::ostringstream text;
    text << synthetic_provenance(o, rec, r, k, theta) << csv_header_field(column) << '\n';
    const auto p = family_parameter_at<F>(theta, prior);  // truncated_family_tool.hpp
    for (std::int64_t i = 0; i < o.synthetic_records; ++i) {
      const double x = synthetic_record_inside<F>(p, rec, g);
      if (rec.family().has_bounds)
        write_synthetic_value(text, o, x, rec.family().lower, rec.family().upper);
      else
        write_synthetic_value(text, o, x);
      text << '\n';
    }
    commit_synthetic_set(o, k, text.str());
  }
  report_synthetic_sets(o);
}

// Writes the synthetic sets of a linear-regression release from the run r of with_covariate_law draws (sampled on the
// scale of layout's release: the declared box's [-1, 1] when the record is unit_scaled). Each set's records are drawn at one
// joint posterior draw (privpost/inference/synthetic_regression.hpp), clamped into the declared box as privpost-release
// clamped the real records, and mapped back to the data's scale (x = c + h x' on a unit-scaled release).
inline void write_synthetic_regression_sets(const options& o, const release_record& rec, const privpost::inference_result& r,
                                            const privpost::regression_layout& layout) {
  const auto& declared = rec.regression();
  const auto draws = privpost::synthetic_parameter_draws(r.draws, o.synthetic_sets);
  create_synthetic_dir(o);
  auto g = synthetic_engine(o);
  const int d = layout.covariates();
  std::vector<privpost::interval> box;
  for (const auto& b : declared.covariate_bounds)
    box.push_back(declared.unit_scaled ? privpost::interval(-1.0, 1.0) : privpost::interval(b.first, b.second));
  const privpost::interval ybox = declared.unit_scaled
                                      ? privpost::interval(-1.0, 1.0)
                                      : privpost::interval(declared.response_bounds.first, declared.response_bounds.second);
  std::string header;
  for (const auto& c : declared.covariates) header += csv_header_field(c) + ",";
  header += csv_header_field(declared.response.empty() ? "y" : declared.response) + "\n";
  const std::string scale = declared.unit_scaled ? " (theta, sigma^2, mu_x, Sigma_x on the declared box's [-1, 1] scale)"
                                                 : " (theta, sigma^2, mu_x, Sigma_x)";
  for (int k = 0; k < o.synthetic_sets; ++k) {
    const Eigen::VectorXd& v = draws[static_cast<std::size_t>(k)];
    Eigen::MatrixXd x = privpost::synthetic_regression_records(
        layout, privpost::regression_synthetic_parameter::from_vector(layout, v), o.synthetic_records, g);
    privpost::clamp_regression_records(x, box, ybox);
    if (declared.unit_scaled) {
      for (int j = 0; j <= d; ++j) {
        const auto& b = j < d ? declared.covariate_bounds[static_cast<std::size_t>(j)] : declared.response_bounds;
        const double c = 0.5 * (b.first + b.second), h = 0.5 * (b.second - b.first);
        x.col(j) = (x.col(j).array() * h + c).matrix();
      }
    }
    std::ostringstream text;
    text << synthetic_provenance(o, rec, r, k, v, scale) << header;
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (int j = 0; j <= d; ++j) {
        const auto& b = j < d ? declared.covariate_bounds[static_cast<std::size_t>(j)] : declared.response_bounds;
        write_synthetic_value(text, o, x(i, j), b.first, b.second);
        text << (j < d ? ',' : '\n');
      }
    commit_synthetic_set(o, k, text.str());
  }
  report_synthetic_sets(o);
}

// Writes the synthetic sets of a logistic or Poisson DP-GLM release from the run r on the sampled scale
// (glm_moment_model's parameter vectors; the declared ranges' unit-ball scale when the record's glm_scale is "unit_ball").
// Records are drawn as the release saw them (privpost/inference/synthetic_glm.hpp): covariates clamped into the declared
// ranges (or scaled onto the ball of the declared radius), the response given them, counts clamped to the declared
// y-bound; then mapped back to the data's scale. Indicator covariates (column=LEVEL) are written as the numbers the
// model has for them (its covariate law is normal), not as levels. Logistic responses are written as 0/1, or as the
// release's positive label and "not_<label>" (privpost-release --positive <label> reads both back).
inline void write_synthetic_glm_sets(const options& o, const release_record& rec, const privpost::inference_result& r,
                                     privpost::glm_kind kind, std::optional<double> intercept) {
  const auto& declared = rec.glm();
  const auto draws = privpost::synthetic_parameter_draws(r.draws, o.synthetic_sets);
  create_synthetic_dir(o);
  auto g = synthetic_engine(o);
  const int d = static_cast<int>(declared.covariates.size());
  const bool unit_ball = declared.glm_scale == "unit_ball";
  privpost::glm_record_limits limits;
  if (unit_ball)
    limits.coordinate = 1.0 / std::sqrt(static_cast<double>(d));
  else
    limits.radius = declared.radius;
  if (kind == privpost::glm_kind::poisson) limits.count = declared.y_bound;
  std::string header;
  for (const auto& c : declared.covariates) header += csv_header_field(c) + ",";
  header += csv_header_field(declared.response.empty() ? "y" : declared.response) + "\n";
  const std::string scale =
      unit_ball ? " (theta~, tau, Omega, mu_x on the declared ranges' unit-ball scale)" : " (theta~, tau, Omega, mu_x)";
  const std::string positive = declared.positive_label.empty() ? "1" : declared.positive_label;
  const std::string negative = declared.positive_label.empty() ? "0" : "not_" + declared.positive_label;
  for (int k = 0; k < o.synthetic_sets; ++k) {
    const Eigen::VectorXd& v = draws[static_cast<std::size_t>(k)];
    Eigen::MatrixXd x =
        privpost::synthetic_glm_records(kind, privpost::glm_synthetic_parameter::from_vector(d, intercept, declared.intercept, v),
                                        limits, o.synthetic_records, g);
    if (unit_ball) {
      // x' = (x - centre) / (h sqrt d), the release's map (scale_to_declared_range), inverted.
      for (int j = 0; j < d; ++j) {
        const auto& b = declared.covariate_bounds[static_cast<std::size_t>(j)];
        const double h = 0.5 * (b.second - b.first) * std::sqrt(static_cast<double>(d)), centre = 0.5 * (b.first + b.second);
        x.col(j) = (x.col(j).array() * h + centre).matrix();
      }
    }
    std::ostringstream text;
    text << synthetic_provenance(o, rec, r, k, v, scale) << header;
    Eigen::VectorXd row(d);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      // Rounded covariates stay inside what the release declared: each inside its range (unit-ball scale), or the row
      // inside the ball of the declared radius; a row that rounding would carry out of the ball is written exactly.
      for (int j = 0; j < d; ++j) {
        row(j) = round_significant(x(i, j), o.synthetic_digits);
        if (unit_ball) {
          const auto& b = declared.covariate_bounds[static_cast<std::size_t>(j)];
          row(j) = std::clamp(row(j), b.first, b.second);
        }
      }
      if (!unit_ball && row.norm() > declared.radius) row = x.row(i).head(d).transpose();
      for (int j = 0; j < d; ++j) {
        write_csv_number(text, row(j));
        text << ',';
      }
      if (kind == privpost::glm_kind::logistic) {
        text << csv_header_field(x(i, d) > 0.0 ? positive : negative) << '\n';
      } else {
        write_csv_number(text, x(i, d));  // a count
        text << '\n';
      }
    }
    commit_synthetic_set(o, k, text.str());
  }
  report_synthetic_sets(o);
}

// Writes the synthetic sets of a contingency-table release (marginals, or pairwise-tables with --method records) from
// the run r of the histogram posterior's cell probabilities: each record a cell drawn from one posterior draw
// (privpost/inference/synthetic.hpp), written as its columns' level names under the owner's column names.
inline void write_synthetic_table_sets(const options& o, const release_record& rec, const privpost::inference_result& r) {
  const auto& declared = rec.table_part();
  const auto draws = privpost::synthetic_parameter_draws(r.draws, o.synthetic_sets);
  create_synthetic_dir(o);
  auto g = synthetic_engine(o);
  std::vector<std::size_t> levels;
  std::string header;
  for (std::size_t a = 0; a < declared.nodes.size(); ++a) {
    levels.push_back(declared.levels[a].size());
    header += (a ? "," : "") + csv_header_field(declared.nodes[a]);
  }
  header += '\n';
  std::vector<std::vector<std::string>> fields(declared.levels.size());
  for (std::size_t a = 0; a < declared.levels.size(); ++a)
    for (const auto& level : declared.levels[a]) fields[a].push_back(csv_header_field(level));
  for (int k = 0; k < o.synthetic_sets; ++k) {
    const Eigen::VectorXd& v = draws[static_cast<std::size_t>(k)];
    // The draw's cell probabilities are many: the provenance line names the draw, not its values.
    std::ostringstream text;
    text << synthetic_provenance(o, rec, r, k, Eigen::VectorXd(),
                                 " (the table's " + std::to_string(v.size()) + " cell probabilities of that draw)")
         << header;
    const auto x = privpost::synthetic_table_records(v, levels, o.synthetic_records, g);
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index a = 0; a < x.cols(); ++a)
        text << fields[static_cast<std::size_t>(a)][static_cast<std::size_t>(x(i, a))] << (a + 1 < x.cols() ? ',' : '\n');
    commit_synthetic_set(o, k, text.str());
  }
  report_synthetic_sets(o);
}

}  // namespace privpost::tools::infer_tool
