"""``first-fit``: the lowest-numbered nodes that can hold the job, in node order
(the default; AccaSim's and Slurm's linear selection behave alike)."""

from __future__ import annotations

from schedlab import AllocationSpec, hookimpl
from schedlab.sim.resources import Allocation, Demand, NodeView, take


class FirstFit:
    """Usable nodes in ascending index order."""

    name = "first-fit"
    #: Tested against the machine invariants: the machine skips its per-call check.
    trusted = True
    #: The allocation is :func:`take` over the usable nodes in this order
    #: (compiled passes reproduce it; see :mod:`schedlab.sim.resources`).
    node_order = "index"

    def allocate(self, view: NodeView, demand: Demand) -> Allocation | None:
        """Fill the demand from the usable nodes, lowest index first."""
        return take(view, demand, view.nodes[view.usable(demand)])


@hookimpl
def schedlab_allocations() -> list[AllocationSpec]:
    """The ``first-fit`` allocation policy."""
    return [
        AllocationSpec(
            name="first-fit",
            description="Lowest-numbered nodes that can hold the job (default).",
            factory=FirstFit,
        )
    ]
