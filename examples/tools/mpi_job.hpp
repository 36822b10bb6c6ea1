// The command-line tools under an MPI launcher (mpirun, mpiexec). Built with MPI (PRIVPOST_TOOLS_MPI, set when CMake
// finds one), a tool started by a launcher joins the job; started on its own it runs as one process and never
// initialises MPI, so the tools behave as before without a launcher, and build without MPI at all.
//
// In a job of several processes every rank runs the same command line through the same code, so that the collective
// steps (docs/distributed.md) line up; rank 0 alone speaks and leaves traces: the others' standard output and error
// go to /dev/null, their output files are not written (output_file.hpp asks output_rank()), and they draw no release
// noise and charge no ledger (the release tool asks). A failure on any rank reaches every rank through
// distributed::collectively, so rank 0 reports it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#if defined(PRIVPOST_TOOLS_MPI)
#include <mpi.h>
#endif

namespace privpost::tools {

/// Whether this process was started by an MPI launcher (Open MPI, MPICH's Hydra, PMIx-based launchers, Slurm's srun
/// with PMI): the launchers set these variables in each process they start.
inline bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

/// The tool's place in an MPI job: one process (rank 0 of 1) unless started by a launcher in a build with MPI.
class mpi_job {
 public:
  /// Joins the job when launched by one (MPI_Init); otherwise nothing (see refuse_launcher_without_mpi).
  mpi_job(int& argc, char**& argv) {
#if defined(PRIVPOST_TOOLS_MPI)
    if (launched_by_mpi()) {
      MPI_Init(&argc, &argv);
      active_ = true;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &size_);
      if (rank_ != 0) {  // rank 0 speaks for the job
        if (std::freopen("/dev/null", "w", stdout) == nullptr || std::freopen("/dev/null", "w", stderr) == nullptr)
          throw std::runtime_error("cannot redirect a non-root rank's output to /dev/null");
      }
    }
#else
    (void)argc;
    (void)argv;
    launcher_without_mpi_ = launched_by_mpi();
#endif
    current() = this;
  }
  ~mpi_job() {
    current() = nullptr;
#if defined(PRIVPOST_TOOLS_MPI)
    if (active_) MPI_Finalize();
#endif
  }
  mpi_job(const mpi_job&) = delete;
  mpi_job& operator=(const mpi_job&) = delete;

  /// Whether the tool runs in a job of more than one process.
  bool spread() const noexcept { return active_ && size_ > 1; }
  /// This process's rank (0 alone).
  int rank() const noexcept { return rank_; }
  /// The job's processes (1 alone).
  int size() const noexcept { return size_; }
  /// std::runtime_error when a launcher started the tool in a build without MPI: each process would run the whole
  /// job on its own and write the same files.
  void refuse_launcher_without_mpi() const {
    if (launcher_without_mpi_)
      throw std::runtime_error(
          "started by an MPI launcher, but this build of privpost has no MPI (CMake found none): run it without mpirun, "
          "or rebuild with MPI installed (Debian: libopenmpi-dev openmpi-bin)");
  }

  /// Ends every process of a spread job with `status` (MPI_Abort): after an error on some ranks, the others may be
  /// waiting in a collective step that will never complete. Rank 0 says first that what the launcher prints next (Open
  /// MPI's "MPI_ABORT was invoked", "ORTE_ERROR_LOG: Out of resource") is its report of this abort, not another error.
  /// Returns when the tool runs alone.
  void abort_job(int status) const {
#if defined(PRIVPOST_TOOLS_MPI)
    if (spread()) {
      if (rank_ == 0)
        std::fprintf(stderr,
                     "(ending all %d processes of the MPI job: the launcher's messages below report this abort; the "
                     "error is the one above)\n",
                     size_);
      std::fflush(stdout);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, status);
    }
#else
    (void)status;
#endif
  }

  /// The job of this process, or nullptr outside main's mpi_job.
  static mpi_job*& current() {
    static mpi_job* job = nullptr;
    return job;
  }

 private:
  bool active_ = false;
  bool launcher_without_mpi_ = false;
  int rank_ = 0;
  int size_ = 1;
};

/// Whether this process writes output files and runs gnuplot: rank 0 of a job, or a process on its own.
inline bool output_rank() { return mpi_job::current() == nullptr || mpi_job::current()->rank() == 0; }

/// The job when the tool runs over several processes, else nullptr.
inline const mpi_job* spread_job() {
  const mpi_job* job = mpi_job::current();
  return job != nullptr && job->spread() ? job : nullptr;
}

}  // namespace privpost::tools
