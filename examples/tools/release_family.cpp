// privpost-release for the exponential-family models: binomial, multinomial (bounded by the model) and the unbounded
// families (records outside the declared bounds dropped).
#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <privpost/privpost.hpp>

#include "release_tool.hpp"

namespace privpost::tools::release_tool {

// --mechanism discrete-laplace|discrete-gaussian: the statistic on the lattice gamma Z^d, exact integer
// noise from the OS CSPRNG. Counts (binomial, multinomial, poisson) at gamma = 1 are on the lattice (exact); any other
// gamma, and the real-valued statistics (which need --granularity), are rounded to the nearest lattice point, and the
// lattice sensitivity grows by the rounding allowance (mechanisms/lattice.hpp).
void release_on_lattice(const options& o, privpost::tools::release_record& r, const Eigen::VectorXd& s, double l1, double l2) {
  using namespace privpost;
  const bool counts = find_model(o.model).counts;
  if (!counts && !o.granularity)
    throw std::invalid_argument("--mechanism " + o.mechanism + " with the " + o.model +
                                " model: its statistics are real numbers; declare the lattice with --granularity G (each "
                                "statistic is rounded to a multiple of G, e.g. 0.01)");
  const double gamma = o.granularity.value_or(1.0);
  lattice lat{gamma, lattice_statistic::rounded, s.size()};
  if (counts && gamma == 1.0) lat.statistics = lattice_statistic::exact;
  r.granularity = gamma;
  r.lattice = lat.statistics == lattice_statistic::exact ? "exact" : "rounded";
  r.lattice_dimension = static_cast<int>(s.size());
  if (o.mechanism == "discrete-laplace") {
    const discrete_laplace_mechanism m(l1, o.epsilon, lat);
    r.sensitivity = l1;
    r.noise = m.scale();
    r.lattice_sensitivity = m.lattice_sensitivity();
    release_into(r, m, s);
  } else {
    const discrete_gaussian_mechanism m(l2, o.epsilon, o.delta, lat);
    r.sensitivity = l2;
    r.noise = m.sigma();
    r.calibration = "zcdp";
    r.lattice_sensitivity = m.lattice_sensitivity();
    release_into(r, m, s);
  }
}

privpost::tools::release_record make_family_release(const options& o) {
  using namespace privpost;
  // What privpost-infer cannot analyse is refused here, before the data are read or any budget is charged.
  if (tools::takes_categories(o.model) && !(o.categories >= 2 && o.categories <= tools::max_categories))
    throw std::invalid_argument("--categories is " + std::to_string(o.categories) + "; accepted: an integer from 2 to " +
                                std::to_string(tools::max_categories) + " (the " + o.model + " models privpost-infer analyses)");
  auto r = tools::release_record::of_model(o.model);
  auto& declared = r.family();
  r.mechanism = o.mechanism;
  r.version = privpost::version_string;
  declared.column = o.column;
  const std::string input = shard_path(o.input);
  double l1 = 0, l2 = 0;
  const bool counts = tools::find_model(o.model).kind == tools::model_kind::bounded_family;
  if (counts) {
    if (o.lower || o.upper) throw std::invalid_argument("--lower/--upper: the " + o.model + " model has fixed bounds");
    r.policy = "none";
    // The family's own sensitivities: its records are bounded by the model.
    std::tie(l1, l2, declared.categories) =
        tools::visit_bounded_family(o.model, o.categories, []<class M>(std::type_identity<M>) {
          return std::tuple<double, double, int>{M::family::l1_sensitivity, M::family::l2_sensitivity, M::categories};
        });
  } else {
    if (!o.lower || !o.upper)
      throw std::invalid_argument("the " + o.model + " model is unbounded: declare record bounds with --lower and --upper");
    declared.has_bounds = true;
    declared.lower = *o.lower;
    declared.upper = *o.upper;
    // Records outside the bounds are dropped: that is what the truncated models of privpost-infer assume (Sec. 4.3).
    r.policy = "drop";
  }
  // This process's records (its shard under mpirun) and its part of the statistic, summed exactly (release_tool.hpp).
  shard_sums part = read_shard([&] {
    const std::vector<double> x = tools::read_csv_column(input, o.column, shard_rows());
    if (counts)  // each record's statistic (counts of 0/1 or of categories), summed exactly
      return tools::visit_bounded_family(o.model, o.categories, [&]<class M>(std::type_identity<M>) {
        using F = typename M::family;
        shard_sums p(static_cast<std::size_t>(F::dimension));
        for (std::size_t i = 0; i < x.size(); ++i) {
          if (!M::valid_record(x[i]))
            throw std::invalid_argument("record " + std::to_string(i + 1) + " is " + std::to_string(x[i]) +
                                        "; accepted: " + M::accepted_records());
          const auto t = F::statistic(static_cast<typename F::record_type>(x[i]));
          for (std::size_t j = 0; j < p.sums.size(); ++j) p.sums[j].add(t(static_cast<Eigen::Index>(j)));
        }
        p.records = static_cast<double>(x.size());
        return p;
      });
    std::vector<std::array<double, 1>> records(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) records[i][0] = x[i];
    return tools::visit_truncated_family(o.model, [&]<class M>(std::type_identity<M>) {
      using F = typename M::family;
      if (F::discrete && tools::is_discrete(o.mechanism)) {
        // counts on the lattice: a record that is not a whole number is an input error, named here (the lattice
        // mechanism would refuse the statistic without saying which record)
        for (std::size_t i = 0; i < x.size(); ++i)
          if (std::isfinite(x[i]) && std::floor(x[i]) != x[i])
            throw std::invalid_argument("record " + std::to_string(i + 1) + " is " + std::to_string(x[i]) + "; accepted by the " +
                                        o.model + " model with a lattice mechanism: a whole number");
      }
      const bounded_statistic<1, record_statistic<F>> stat({}, {interval(*o.lower, *o.upper)}, out_of_bounds::drop);
      // The sensitivity from the declared bounds alone, from the one statistic object that sums the records.
      l1 = stat.l1_sensitivity();
      l2 = stat.l2_sensitivity();
      const auto partial = stat.accumulate(records);
      shard_sums p(partial.sums.size());
      std::copy(partial.sums.begin(), partial.sums.end(), p.sums.begin());
      p.records = static_cast<double>(partial.records);
      p.outside = static_cast<double>(partial.outside);
      return p;
    });
  });
  const Eigen::VectorXd s = combine(part);  // every rank's part; the ranks other than 0 stop here
  r.n = part.records;
  if (o.mechanism == "laplace") {
    const laplace_mechanism m(l1, o.epsilon);
    r.sensitivity = l1;
    r.noise = m.scale();
    release_into(r, m, s);
  } else if (o.mechanism == "gaussian") {
    const auto m = gaussian_mechanism::analytic(l2, o.epsilon, o.delta);
    r.sensitivity = l2;
    r.noise = m.sigma();
    r.calibration = "analytic";
    release_into(r, m, s);
  } else {
    release_on_lattice(o, r, s, l1, l2);
  }
  return r;
}

}  // namespace privpost::tools::release_tool
