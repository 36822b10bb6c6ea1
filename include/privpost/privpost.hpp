// privpost/privpost.hpp
// The umbrella header: includes every public header of privpost.
// Include it, or the one public header you need; never a detail/ header.
#pragma once

#include "privpost/version.hpp"

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/linalg/norm_product.hpp"
#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/inverse_gaussian.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/os_random_engine.hpp"
#include "privpost/core/random/poisson.hpp"
#include "privpost/core/random/truncated_normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/core/random/wishart.hpp"

#include "privpost/mechanisms/analytic_gaussian.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/published_bounds.hpp"
#include "privpost/mechanisms/ssp.hpp"

#include "privpost/diagnostics/calibration.hpp"
#include "privpost/diagnostics/convergence.hpp"
#include "privpost/diagnostics/mmd.hpp"
#include "privpost/diagnostics/sample_quantile.hpp"

#include "privpost/families/autodiff_family.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/family_concepts.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/normal_known_variance.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/special_functions.hpp"
#include "privpost/families/truncation.hpp"

#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/naive.hpp"
#include "privpost/samplers/nonprivate.hpp"
#include "privpost/samplers/ops.hpp"

#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/family_study.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/inference/posterior.hpp"
#include "privpost/inference/truncated_study.hpp"
