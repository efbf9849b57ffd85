"""``contiguous``: a run of consecutive nodes (by index within the partition), the
lowest such run that holds the job, as on machines whose network rewards
neighbouring nodes (e.g. the Blue Gene and Cray allocators). A job that fits the
free nodes but in no consecutive run waits."""

from __future__ import annotations

import numpy as np
from schedlab import AllocationSpec, hookimpl
from schedlab.sim.resources import Allocation, Demand, NodeView, take


class Contiguous:
    """The lowest run of consecutive usable nodes that holds the job."""

    name = "contiguous"
    #: Tested against the machine invariants: the machine skips its per-call check.
    trusted = True

    def allocate(self, view: NodeView, demand: Demand) -> Allocation | None:
        """Try each run of consecutive usable nodes, lowest first."""
        usable = view.usable(demand)
        if not usable.any():
            return None
        # Split the partition's node list into runs of consecutive usable nodes.
        edges = np.flatnonzero(np.diff(np.concatenate(([0], usable.view(np.int8), [0]))))
        nodes = view.nodes
        for begin, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            run = nodes[begin:end]
            # Consecutive positions must also be consecutive machine nodes.
            cuts = np.flatnonzero(np.diff(run) != 1) + 1
            for piece in np.split(run, cuts):
                for first in range(len(piece)):
                    alloc = take(view, demand, piece[first:])
                    if alloc is None:
                        break
                    if len(alloc) == 0 or alloc.nodes[-1] - alloc.nodes[0] + 1 == len(alloc):
                        return alloc
        return None


@hookimpl
def schedlab_allocations() -> list[AllocationSpec]:
    """The ``contiguous`` allocation policy."""
    return [
        AllocationSpec(
            name="contiguous",
            description="The lowest run of consecutive nodes that holds the job.",
            factory=Contiguous,
        )
    ]
