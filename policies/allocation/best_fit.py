"""``best-fit``: the nodes that are left with the fewest free cores once the job is
placed, so large holes stay whole for large jobs (ties: lower node index)."""

from __future__ import annotations

import numpy as np
from schedlab import AllocationSpec, hookimpl
from schedlab.sim.resources import CORES, Allocation, Demand, NodeView, take


class BestFit:
    """Usable nodes by free cores, fewest first (a node the job fills exactly
    comes before one it leaves half empty)."""

    name = "best-fit"
    #: Tested against the machine invariants: the machine skips its per-call check.
    trusted = True
    #: The allocation is :func:`take` over the usable nodes in this order
    #: (compiled passes reproduce it; see :mod:`schedlab.sim.resources`).
    node_order = "fewest-free-cores"

    def allocate(self, view: NodeView, demand: Demand) -> Allocation | None:
        """Fill the demand from the usable nodes, fewest free cores first."""
        nodes = view.nodes[view.usable(demand)]
        free = view.free[nodes, CORES]
        return take(view, demand, nodes[np.argsort(free, kind="stable")])


@hookimpl
def schedlab_allocations() -> list[AllocationSpec]:
    """The ``best-fit`` allocation policy."""
    return [
        AllocationSpec(
            name="best-fit",
            description="Nodes with the fewest free cores first (packs jobs tightly).",
            factory=BestFit,
        )
    ]
