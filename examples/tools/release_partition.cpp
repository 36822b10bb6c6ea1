// privpost-release --partitions M for linear regression records: posterior probabilities of one coefficient at
// cutoffs and its quantiles at levels by sample and aggregate (privpost/inference/partition_posterior.hpp).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <privpost/privpost.hpp>

#include "partition_record.hpp"
#include "release_tool.hpp"

namespace privpost::tools::release_tool {

namespace {

// The budget split: one share per part (probabilities; bound search and quantile values), even by default; given
// shares must match the parts in number and sum to --epsilon (a mismatch would charge more or less than declared).
std::vector<double> epsilon_shares(const options& o, std::size_t parts) {
  if (o.epsilon_split.empty()) return std::vector<double>(parts, o.epsilon / static_cast<double>(parts));
  const auto shares = parse_numbers(o.epsilon_split, "--epsilon-split");
  const std::string expected = parts == 1   ? "one share (the probabilities or the quantiles)"
                               : parts == 2 ? "two shares (the bound search, the quantile values)"
                                            : "three shares (the probabilities, the bound search, the quantile values)";
  if (shares.size() != parts)
    throw std::invalid_argument("--epsilon-split has " + std::to_string(shares.size()) + " values; accepted: " + expected);
  double sum = 0.0;
  for (double s : shares) {
    if (!(s > 0.0)) throw std::invalid_argument("--epsilon-split: every share must be > 0");
    sum += s;
  }
  if (std::abs(sum - o.epsilon) > 1e-9 * o.epsilon)
    throw std::invalid_argument("--epsilon-split sums to " + std::to_string(sum) + "; accepted: shares that sum to --epsilon " +
                                std::to_string(o.epsilon));
  return shares;
}

// Every check that could refuse the release, from public quantities only, before the charge: the record as it will be
// written, with placeholder values in place of the private ones (each partition's output at the middle of its range),
// read back by privpost-infer's reader. The quantiles are checked at the largest half-width the bound search can
// return, max_half_width, where their noise scale L 2 b / (M epsilon_2) is largest. A release privpost-infer would
// refuse (1001 cutoffs, say) is refused here, and no failure of the release itself can follow the charge.
void check_partition_record(const partition_record& r, std::size_t partitions, const std::vector<double>& cutoffs,
                            const probability_release_options& po, const std::vector<double>& levels,
                            const bound_search_options& bo, double eps1, double eps2) {
  partition_record dry = r;
  std::mt19937_64 g(0);  // placeholder values only: no private value reaches this engine
  if (!cutoffs.empty()) {
    const std::vector<std::vector<double>> p(partitions, std::vector<double>(cutoffs.size(), 0.5));
    dry.probabilities = release_posterior_probabilities(p, cutoffs, po, g);
  }
  if (!levels.empty()) {
    const double scale = static_cast<double>(levels.size()) * 2.0 * bo.max_half_width / static_cast<double>(partitions) / eps2;
    if (!std::isfinite(scale))
      throw std::invalid_argument("--bound-max " + detail::format_value(bo.max_half_width) +
                                  ": the quantiles' noise scale at that half-width (L 2 b / (M epsilon_2) with L = " +
                                  std::to_string(levels.size()) + " levels, M = " + std::to_string(partitions) +
                                  " partitions) is not finite; accepted: a half-width whose noise scale is finite; nothing "
                                  "was charged");
    bound_search_result b;
    b.doublings = bound_search_last_index("--bound-*", bo);
    b.center = bo.center;
    b.half_width = bo.max_half_width;
    b.capped = true;
    b.budget = {eps1, 0.0};
    const std::vector<std::vector<double>> q(partitions, std::vector<double>(levels.size(), bo.center));
    dry.quantiles = release_posterior_quantiles(q, levels, b, eps2, g);
    dry.bound_options = bo;
  }
  try {
    (void)partition_from_json(to_json(dry));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("privpost-infer would refuse this partition release (" + std::string(e.what()) +
                                "); nothing was charged");
  }
}

}  // namespace

std::string make_partition_release(const options& o) {
  using namespace privpost;
  if (tools::kind_of(o.model) != tools::model_kind::regression)
    throw std::invalid_argument("--partitions serves the linreg model");
  if (o.covariates.empty() || o.response.empty())
    throw std::invalid_argument("linreg needs --covariates a,b,... and --response y");
  if (o.x_bounds.empty() || o.y_bounds.empty())
    throw std::invalid_argument("linreg needs declared bounds: --x-bounds lo,hi (every covariate) and --y-bounds lo,hi");
  if (o.cutoffs.empty() && o.quantile_levels.empty())
    throw std::invalid_argument("--partitions needs --cutoffs b1,b2,... or --quantiles p1,p2,... (or both)");
  if (o.mechanism_given && o.mechanism != "laplace")
    throw std::invalid_argument("partition releases add Laplace noise; --mechanism " + o.mechanism + " does not apply");
  partition_record r;
  r.version = privpost::version_string;
  r.covariates = split_list(o.covariates, "--covariates");
  r.response = o.response;
  r.intercept = !o.no_intercept;
  r.coefficient = o.coefficient.empty() ? r.covariates.front() : o.coefficient;
  const auto at = std::find(r.covariates.begin(), r.covariates.end(), r.coefficient);
  if (at == r.covariates.end())
    throw std::invalid_argument("--coefficient '" + echo(r.coefficient) + "' is not one of --covariates");
  const auto xb = parse_bounds(o.x_bounds, "--x-bounds");
  r.response_bounds = parse_bounds(o.y_bounds, "--y-bounds");
  r.covariate_bounds.assign(r.covariates.size(), xb);
  r.prior_precision = o.prior_precision;
  r.prior_a = o.prior_a;
  r.prior_b = o.prior_b;
  r.partition_prior = o.partition_prior;
  r.epsilon = o.epsilon;
  check_epsilon("privpost-release", o.epsilon);

  // Records clamped into the declared box and mapped to [-1, 1] by it (public), as the SSP release does: the default
  // prior then fits every data set's scale. Coefficient k on the data's scale is (y half-width / x half-width) times
  // the unit-scale one, so cutoffs and quantiles convert by that positive factor.
  const int d = static_cast<int>(r.covariates.size());
  const double xc = 0.5 * (xb.first + xb.second), xh = 0.5 * (xb.second - xb.first);
  const double yc = 0.5 * (r.response_bounds.first + r.response_bounds.second),
               yh = 0.5 * (r.response_bounds.second - r.response_bounds.first);
  std::vector<std::vector<double>> columns;
  for (const auto& c : r.covariates) columns.push_back(read_csv_column(o.input, c));
  const std::vector<double> y = read_csv_column(o.input, o.response);
  const auto n = static_cast<Eigen::Index>(y.size());
  r.n = static_cast<double>(n);
  const int offset = r.intercept ? 1 : 0;
  Eigen::MatrixXd x(n, d + offset);
  Eigen::VectorXd yy(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (r.intercept) x(i, 0) = 1.0;
    for (int k = 0; k < d; ++k)
      x(i, k + offset) =
          (std::clamp(columns[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)], xb.first, xb.second) - xc) / xh;
    yy(i) = (std::clamp(y[static_cast<std::size_t>(i)], r.response_bounds.first, r.response_bounds.second) - yc) / yh;
  }
  const Eigen::Index coefficient = static_cast<Eigen::Index>(at - r.covariates.begin()) + offset;
  const double factor = yh / xh;
  const regression_partition_prior prior{Eigen::VectorXd::Zero(d + offset),
                                         o.prior_precision * Eigen::MatrixXd::Identity(d + offset, d + offset),
                                         0.0,
                                         o.prior_a,
                                         o.prior_b,
                                         0.0};
  const regression_coefficient_posterior unit(x, yy, prior, coefficient);
  auto posterior = [&](const partition_task& task, std::mt19937_64& g) {
    scalar_marginal m = unit(task, g);
    m.location *= factor;
    m.scale *= factor;
    return m;
  };
  // Every partition needs more records than coefficients for a proper posterior; M <= n / (p + 2).
  const partition_plan plan = [&] {
    try {
      return partition_plan(static_cast<std::size_t>(n), o.partitions, static_cast<std::size_t>(d + offset + 2));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--partitions " + std::to_string(o.partitions) + ": " + without_function(e.what()));
    }
  }();
  const partition_run_options run{0, o.threads};  // closed forms: the engines are not used

  const std::vector<double> cutoffs = o.cutoffs.empty() ? std::vector<double>{} : parse_numbers(o.cutoffs, "--cutoffs");
  const std::vector<double> levels =
      o.quantile_levels.empty() ? std::vector<double>{} : parse_numbers(o.quantile_levels, "--quantiles");
  const std::size_t parts = (cutoffs.empty() ? 0 : 1) + (levels.empty() ? 0 : 2);
  const auto shares = epsilon_shares(o, parts);
  probability_release_options po;
  po.combiner = parse_probability_combiner(o.combiner);
  po.epsilon = cutoffs.empty() ? 0.0 : shares[0];
  bound_search_options bo;
  bo.center = o.bound_center;
  bo.base_half_width = o.bound_base;
  bo.fraction = o.bound_fraction;
  bo.max_half_width = o.bound_max;
  const double eps1 = levels.empty() ? 0.0 : shares[parts - 2], eps2 = levels.empty() ? 0.0 : shares[parts - 1];
  // Every argument is checked before the ledger is charged and before any noise is drawn.
  partition_outputs probabilities, quantiles;
  if (!cutoffs.empty()) {
    check_probability_release("--cutoffs", cutoffs, po);
    probabilities = partition_cdf(plan, posterior, cutoffs, run,
                                  o.partition_prior == "full" ? partition_prior::full : partition_prior::fractional);
  }
  if (!levels.empty()) {
    check_quantile_levels("--quantiles", levels);
    if (!(o.bound_max > 0.0))
      throw std::invalid_argument("--quantiles needs --bound-max, the largest plausible |coefficient - centre| (public)");
    bound_search_last_index("--bound-*", bo);
    quantiles = partition_quantiles(plan, posterior, levels, run);
  }
  check_partition_record(r, plan.partitions(), cutoffs, po, levels, bo, eps1, eps2);
  if (active_ledger != nullptr)
    active_ledger->charge_entry(
        ledger_entry{ledger_label + " (partition release)", {o.epsilon, 0.0}, 0.5 * o.epsilon * o.epsilon});
  // The noise: the OS CSPRNG (the library's default overloads).
  if (!cutoffs.empty()) r.probabilities = release_posterior_probabilities(probabilities.values, cutoffs, po);
  if (!levels.empty()) {
    const auto bounds = private_bound_search(quantiles.values, bo, eps1);
    r.quantiles = release_posterior_quantiles(quantiles.values, levels, bounds, eps2);
    r.bound_options = bo;
  }
  if (active_ledger != nullptr) {
    r.ledger_file = o.ledger;
    r.ledger_label = ledger_label;
    r.ledger_spent = active_ledger->accountant().spent();
    r.ledger_total = active_ledger->accountant().total();
    r.ledger_entries = active_ledger->accountant().entries().size();
  }
  std::cerr << "privpost-release: partition release of the coefficient of " << r.coefficient << ": M = " << plan.partitions()
            << " partitions of " << plan.size(plan.partitions() - 1) << "-" << plan.size(0) << " records, epsilon " << o.epsilon;
  if (r.probabilities) std::cerr << "; " << cutoffs.size() << " probabilities, noise scale " << r.probabilities->noise_scale;
  if (r.quantiles)
    std::cerr << "; " << levels.size() << " quantiles clipped to " << r.quantiles->bounds.center << " +- "
              << r.quantiles->bounds.half_width << ", noise scale " << r.quantiles->noise_scale;
  std::cerr << "\n";
  // The partitions whose posterior failed are private (they depend on the data): the owner sees a warning here, the
  // record never carries it.
  const std::size_t failed = probabilities.failures + quantiles.failures;
  if (failed > 0)
    std::cerr << "privpost-release: warning (private, not in the record): " << failed
              << " partition posterior(s) failed and were replaced by the fallback\n";
  r.release_id = new_release_id();
  return to_json(r).dump(2) + "\n";
}

}  // namespace privpost::tools::release_tool
