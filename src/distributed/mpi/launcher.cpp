// Launcher detection for init_process_group (see launcher.h).
//
// Note [srun direct launch]
// `srun -n N ember train ...` starts the N tasks itself; MPI_Init then joins
// them through the PMI server of the srun MPI plugin. Debian's OpenMPI 4.1
// speaks PMIx only (its ext3x component; no PMI-1/PMI-2), so the plugin must
// be pmix (`srun --mpi=pmix`, or MpiDefault=pmix in slurm.conf). Without it
// the tasks carry only SLURM_* variables: if Ember then treated each as a
// single process, N independent trainings would write N run directories
// into one place. So a step of several tasks always means MPI, and without
// a PMI variable it is refused with the fix before MPI_Init.
#include "launcher.h"

#include <cstdlib>

#include "ember/core/error.h"

namespace ember::distributed {

bool has_pmi_environment() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(var)) return true;
  return false;
}

int srun_step_tasks() {
  // mpirun inside an allocation launches its daemons with srun, so its ranks
  // may inherit a step's variables; its own variable takes precedence.
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) return 0;
  const char* v = std::getenv("SLURM_STEP_NUM_TASKS");
  if (!v) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  EMBER_CHECK(end != v && *end == '\0' && n > 0 && n < (1L << 30),
              "SLURM_STEP_NUM_TASKS: expected a positive number of tasks, got '{}'", v);
  return static_cast<int>(n);
}

void check_srun_has_pmi(int srun_tasks) {
  if (srun_tasks <= 1 || has_pmi_environment()) return;
  const char* rank = std::getenv("SLURM_PROCID");
  EMBER_ERROR(
      "init_process_group: srun started this job step with {} tasks (this is task {}) but gave them no PMI, so "
      "MPI cannot join them into one world; launch with `srun --mpi=pmix -n {} ...` (or set MpiDefault=pmix in "
      "slurm.conf; `srun --mpi=list` shows the plugins), or run mpirun inside the allocation",
      srun_tasks, rank ? rank : "?", srun_tasks);
}

void check_srun_world(int srun_tasks, int world_size) {
  if (srun_tasks == 0) return;
  EMBER_CHECK(world_size == srun_tasks,
              "init_process_group: srun started {} tasks but MPI sees a world of {}; srun's MPI plugin does not "
              "match this MPI library (OpenMPI needs `srun --mpi=pmix`; `srun --mpi=list` shows the plugins)",
              srun_tasks, world_size);
}

}  // namespace ember::distributed
