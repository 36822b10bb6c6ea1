// Fixture: the umbrella header including the MPI layer (a violation: distributed/ needs MPI).
#pragma once

#include "privpost/distributed/mpi.hpp"
