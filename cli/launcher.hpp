// The job a launcher (mpirun, mpiexec, srun with PMIx) started this process
// in, read from the environment it sets: Open MPI, MPICH's Hydra and PMIx.
#pragma once

namespace hcube::cli {

// How many processes the launcher started with this one; 1 when run alone.
int launched_processes();

// This process's rank among them; 0 when run alone.
int launched_rank();

} // namespace hcube::cli
