// privpost-synthesize's output (see synthesize_main.cpp): after privpost-infer's noise-aware run of a family release,
// m synthetic data sets of N records each, one CSV file per set, from m posterior draws spread over the chains
// (privpost/inference/synthetic.hpp). The records are the model's, on the data's own scale: 0/1 for the binomial, the
// category index for the multinomial, and for the unbounded families the model truncated to the declared bounds (the
// records the release was about: privpost-release dropped the others), by rejection with a bounded number of tries.
// Each file starts with '#' lines naming the release and saying that no further budget was spent; privpost-release
// reads such a file back (its CSV reader skips '#' lines before the header).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include <privpost/privpost.hpp>

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
  constexpr int max_tries = 100000;
  for (int t = 0; t < max_tries; ++t) {
    const double x = static_cast<double>(F::draw_record(p, g));
    if (!rec.has_bounds || (x >= rec.lower && x <= rec.upper)) return x;
  }
  throw std::domain_error("privpost-synthesize: a posterior draw of the " + rec.model + " model put no record inside the " +
                          "declared bounds [" + std::to_string(rec.lower) + ", " + std::to_string(rec.upper) + "] in " +
                          std::to_string(max_tries) + " tries");
}

// Writes o.synthetic_sets files synthetic_<k>.csv into o.synthetic_dir from the noise-aware run r.
template <class F>
void write_synthetic_sets(const options& o, const release_record& rec, const privpost::inference_result& r) {
  if constexpr (!privpost::family_from_vector<F>) {
    throw std::invalid_argument(
        "privpost-synthesize: the " + rec.model +
        " model's posterior draws do not determine its records (its parameter vector lacks the known sd)");
  } else {
    const auto draws = privpost::synthetic_parameter_draws(r.draws, o.synthetic_sets);
    std::error_code ec;
    std::filesystem::create_directories(o.synthetic_dir, ec);
    if (ec) throw std::runtime_error("privpost-synthesize: cannot create '" + o.synthetic_dir + "': " + ec.message());
    // The records' engine: seeded from the run's seed, apart from the chains' engines.
    auto g = privpost::chain_engine(o.seed, 1 << 20);
    const std::string column = rec.column.empty() ? "x" : rec.column;
    for (int k = 0; k < o.synthetic_sets; ++k) {
      const Eigen::VectorXd& theta = draws[static_cast<std::size_t>(k)];
      std::ostringstream text;
      text << "# privpost-synthesize: synthetic data set " << k + 1 << " of " << o.synthetic_sets << ", " << o.synthetic_records
           << " records from the noise-aware posterior predictive (privpost " << privpost::version_string << ")\n";
      text << "# release: " << o.release << " (model " << rec.model << ", n " << rec.n << ", " << rec.mechanism
           << " mechanism, epsilon " << rec.epsilon;
      if (rec.delta > 0.0) text << ", delta " << rec.delta;
      text << "); no further privacy budget was spent (post-processing of the release)\n";
      text << "# posterior draw " << k + 1 << " of " << o.synthetic_sets << " spread over " << r.draws.num_chains()
           << " chains x " << r.draws.draws_per_chain() << " draws, seed " << o.seed << "; parameter";
      for (Eigen::Index j = 0; j < theta.size(); ++j) text << (j ? "," : " ") << theta(j);
      text << '\n' << csv_header_field(column) << '\n';
      typename F::parameter_type p{};
      if constexpr (std::is_arithmetic_v<typename F::parameter_type>)
        p = theta(0);
      else
        p = F::from_vector(theta);
      char value[32];
      for (std::int64_t i = 0; i < o.synthetic_records; ++i) {
        std::snprintf(value, sizeof value, "%.17g", synthetic_record_inside<F>(p, rec, g));
        text << value << '\n';
      }
      const std::string path =
          (std::filesystem::path(o.synthetic_dir) / ("synthetic_" + std::to_string(k + 1) + ".csv")).string();
      privpost::tools::output_file(path).commit(text.str());
    }
    std::printf(
        "\nprivpost-synthesize: wrote %d synthetic data set%s of %lld records to %s (synthetic_1.csv ...); no further "
        "privacy budget was spent\n",
        o.synthetic_sets, o.synthetic_sets == 1 ? "" : "s", static_cast<long long>(o.synthetic_records), o.synthetic_dir.c_str());
  }
}

}  // namespace privpost::tools::infer_tool
