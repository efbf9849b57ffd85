"""``contiguous``: a run of consecutive nodes (by index within the partition), the
lowest such run that holds the job, as on machines whose network rewards
neighbouring nodes (e.g. the Blue Gene and Cray allocators). A job that fits the
free nodes but in no consecutive run waits."""

from __future__ import annotations

import numpy as np
from schedlab import AllocationSpec, hookimpl
from schedlab.sim.resources import (
    CORES,
    GPUS,
    Allocation,
    Demand,
    NodeView,
    cores_given,
    fill_in_order,
    take,
)


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
                alloc = self._lowest_in(view, demand, piece)
                if alloc is not None:
                    return alloc
        return None

    @staticmethod
    def _lowest_in(view: NodeView, demand: Demand, piece: np.ndarray) -> Allocation | None:
        """The lowest run within ``piece`` (consecutive usable machine nodes) that
        holds the job: from each first node in turn, the nodes in index order up to
        the last one the job needs, kept when every one of them gives it something
        (so the allocation is consecutive) and, with ``max_nodes``, at most that
        many (only the first ``max_nodes`` nodes from each start are tried: a longer
        run would hold more)."""
        limit = demand.max_nodes if demand.chunk is None else 0
        enough: np.ndarray = np.ones(len(piece), dtype=bool)
        if limit:
            # Per start, whether the nodes from there on hold every dimension the
            # job asks (whatever their count): once they do not, no later start can.
            src = view.capacity if view.exclusive else view.free
            have = [cores_given(view, demand, piece)]
            want = [int(demand.total[CORES])]
            for d in np.flatnonzero(demand.total[GPUS:]) + GPUS:
                have.append(np.maximum(src[piece, d], 0))
                want.append(int(demand.total[d]))
            rest = np.cumsum(np.stack(have)[:, ::-1], axis=1)[:, ::-1]
            enough = np.asarray((rest >= np.array(want)[:, None]).all(axis=0))
        for first in range(len(piece)):
            if limit:
                if not enough[first]:
                    break
                # Exactly the index order's fill, without take's fallback (which
                # reorders the rest by most cores and may pick a far node).
                alloc = fill_in_order(view, demand, piece[first : first + limit])
                if alloc is None:
                    continue
            else:
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
