// init_process_group: joins the data-parallel job this process was launched
// in (mpirun -np N, srun --mpi=pmix) and returns its ProcessGroup.
// libember_distributed (link ember::distributed); libember itself has no
// MPI in it, so single-process programs never load or start MPI.
//
// Without a launcher (no OMPI_COMM_WORLD_SIZE / PMIX_RANK / PMI_RANK in the
// environment, and not a task of an srun step of several tasks) or with
// EMBER_DIST=off, the result is a world of one rank (local_process_group)
// and MPI is not initialized; EMBER_DIST=mpi forces MPI (a singleton job).
// A task of `srun -n N` (N > 1) without PMI is refused with the fix
// (`srun --mpi=pmix`), never left to train alone as a world of one.
#pragma once

#include <string>

#include "ember/distributed/process_group.h"

namespace ember::distributed {

struct InitOptions {
  // A collective that has not completed after this long fails with an error
  // naming it (a rank died, raised, or issued a different collective).
  // 0: EMBER_DIST_TIMEOUT (seconds) from the environment, else 300 s.
  double timeout_s = 0;
};

// backend: "mpi". The communicator is a duplicate of MPI_COMM_WORLD, so the
// tags and collectives of the caller's own MPI code never mix with Ember's;
// if the caller initialized MPI itself it must have asked for
// MPI_THREAD_MULTIPLE (Ember communicates from its own thread).
ProcessGroupPtr init_process_group(const std::string& backend = "mpi", InitOptions options = {});

// True when this process was started by an MPI launcher or as one of several
// tasks of an srun step (the check init_process_group makes).
bool launched_by_mpi();

}  // namespace ember::distributed
