// privpost/privpost.hpp
// The umbrella header: includes every public header of privpost.
// Include it, or the one public header you need; never a detail/ header.
#pragma once

#include "privpost/version.hpp"

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/inverse_gaussian.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/os_random_engine.hpp"
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

#include "privpost/inference/posterior.hpp"
