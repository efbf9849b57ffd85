"""``spread``: the nodes with the most free cores first, spreading load over the
machine (worst fit; ties: lower node index)."""

from __future__ import annotations

import numpy as np
from schedlab import AllocationSpec, hookimpl
from schedlab.sim.resources import CORES, Allocation, Demand, NodeView, take


class Spread:
    """Usable nodes by free cores, most first."""

    name = "spread"
    #: Tested against the machine invariants: the machine skips its per-call check.
    trusted = True
    #: The allocation is :func:`take` over the usable nodes in this order
    #: (compiled passes reproduce it; see :mod:`schedlab.sim.resources`).
    node_order = "most-free-cores"

    def allocate(self, view: NodeView, demand: Demand) -> Allocation | None:
        """Fill the demand from the usable nodes, most free cores first."""
        nodes = view.nodes[view.usable(demand)]
        free = view.free[nodes, CORES]
        return take(view, demand, nodes[np.argsort(-free, kind="stable")])


@hookimpl
def schedlab_allocations() -> list[AllocationSpec]:
    """The ``spread`` allocation policy."""
    return [
        AllocationSpec(
            name="spread",
            description="Nodes with the most free cores first (spreads the load).",
            factory=Spread,
        )
    ]
