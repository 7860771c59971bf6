// What the launcher of this process says about the job, read from the
// environment before MPI_Init: mpirun (OpenMPI's OMPI_COMM_WORLD_SIZE), a
// PMI server (PMIX_RANK from mpirun or srun --mpi=pmix, PMI_RANK from
// srun --mpi=pmi2 or MPICH's Hydra), or Slurm's srun itself.
#pragma once

namespace ember::distributed {

// A PMI server or OpenMPI's mpirun started this process: MPI_Init finds
// the job's other ranks.
bool has_pmi_environment();

// The number of tasks of the srun step this process is a task of, when srun
// started it directly (SLURM_STEP_NUM_TASKS); 0 otherwise: not under Slurm,
// in a batch script (no step), or started by mpirun inside an allocation,
// whose world is mpirun's, not the step's.
int srun_step_tasks();

// srun started several tasks without a PMI the MPI library can use: MPI_Init
// would make each task a world of one (or abort). Throws naming the fix.
void check_srun_has_pmi(int srun_tasks);

// After MPI_Init: the world MPI found is the srun step (a PMI plugin that
// does not match the MPI library gives worlds of one).
void check_srun_world(int srun_tasks, int world_size);

}  // namespace ember::distributed
