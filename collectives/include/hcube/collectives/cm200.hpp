// All-to-all broadcast and reduction along Hamiltonian cycles, as on the
// Connection Machine CM-200 (Mathur & Johnsson, sections 4-5), plus
// the source's alternatives as baselines. One header per part:
//   cm200/schedule.hpp        options, step hook, who talks to whom
//   cm200/partial.hpp         partial results over sets of ranks
//   cm200/spread.hpp          spreading over rotated binomial trees
//   cm200/allgather.hpp       the broadcasts (cm200::allgather_algo)
//   cm200/reduce_scatter.hpp  the reductions (cm200::reduce_scatter_algo)
#pragma once

#include <hcube/collectives/cm200/allgather.hpp>
#include <hcube/collectives/cm200/reduce_scatter.hpp>
