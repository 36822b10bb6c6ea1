// What the tools' model table says of a model beyond its name: its kind, and privpost-infer's methods and options it
// takes, as flags (models.hpp holds the table; a model's own file may declare its flags).
#pragma once

#include <cstdint>

namespace privpost::tools {

/// How a model is released and analysed: one implementation file per kind in each tool.
enum class model_kind {
  bounded_family,    ///< an exponential family whose records are bounded by the model (binomial, multinomial)
  unbounded_family,  ///< an exponential family whose records are truncated to declared bounds (Sec. 4.3)
  regression,        ///< linear regression's [X^T X, X^T y, y^T y]
  glm,               ///< logistic and Poisson regression (DP-GLM, PASS-GLM statistics)
  tables,            ///< the contingency tables of a declared graph (CGM)
  marginals,         ///< declared marginal tables of a contingency table (noisy marginals; histogram_gibbs)
};

/// privpost-infer's --method values beyond gibbs and auto (which every model accepts), as flags.
enum infer_method : std::uint8_t {
  method_exact = 1,      ///< the integer sum enumerated
  method_corrected = 2,  ///< Gibbs-SS with a Metropolis-Hastings-corrected sum
  method_records = 4,    ///< the records latent (record-level sampler)
};

/// privpost-infer's model-specific options, as flags.
enum infer_option : std::uint8_t {
  option_collapsed_moves = 1,  ///< --collapsed-moves
  option_link = 2,             ///< --link
  option_target_accept = 4,    ///< --target-accept
  option_moments = 8,          ///< --moments
  option_metric = 16,          ///< --metric
  option_shift_moves = 32,     ///< --shift-moves
  option_map_em = 64,          ///< --max-iterations, --point-estimate, --map-em-evidence (MAP-EM's settings)
  option_max_minutes = 128,    ///< --max-minutes (the runs whose time is estimated before they start)
};

}  // namespace privpost::tools
