// Everything a node program needs: the machine, the node interface and every
// collective of the sources.
#pragma once

#include <hcube/machine.hpp>
#include <hcube/system.hpp>
#include <hcube/topology.hpp>

#include <hcube/collectives/allgather.hpp>
#include <hcube/collectives/allreduce.hpp>
#include <hcube/collectives/alltoall.hpp>
#include <hcube/collectives/aspc.hpp>
#include <hcube/collectives/broadcast.hpp>
#include <hcube/collectives/cm200.hpp>
#include <hcube/collectives/descend.hpp>
#include <hcube/collectives/reduce.hpp>
#include <hcube/collectives/reduce_scatter.hpp>
#include <hcube/collectives/scan.hpp>
#include <hcube/collectives/scatter.hpp>
#include <hcube/collectives/shift.hpp>
