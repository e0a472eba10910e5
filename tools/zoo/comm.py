"""The device mesh and the communication ops a rank program emits (plan-format section 5)."""
import itertools

import numpy as np

from .graph import COMM_DOMAIN, MS_DOMAIN


class Mesh:
    """Row-major mesh over named axes; a rank's coordinate is its row-major index."""

    def __init__(self, axes):
        self.axes = [a for a, _ in axes]
        self.shape = [n for _, n in axes]
        self.size = int(np.prod(self.shape)) if self.shape else 1

    def coords(self, rank):
        out = {}
        for a, n in reversed(list(zip(self.axes, self.shape))):
            out[a] = rank % n
            rank //= n
        return {a: out[a] for a in self.axes}

    def rank(self, coords):
        r = 0
        for a, n in zip(self.axes, self.shape):
            r = r * n + coords.get(a, 0)
        return r

    def group(self, rank, axes):
        """Ranks sharing my coordinates off `axes`, ordered row-major on `axes`."""
        me = self.coords(rank)
        sizes = [self.shape[self.axes.index(a)] for a in axes]
        out = []
        for combo in itertools.product(*[range(n) for n in sizes]):
            c = dict(me)
            c.update(zip(axes, combo))
            out.append(self.rank(c))
        return out


class Comm:
    """Emits collectives for one rank. Groups are given as mesh axes; `generic` writes them as
    group_axes / peer_axis (one program for many ranks), else as explicit rank lists; `ms` uses
    com.microsoft AllReduce/AllGather where the group is the whole world."""

    def __init__(self, g, mesh, rank, generic=False, ms=False):
        self.g, self.mesh, self.rank, self.generic, self.ms = g, mesh, rank, generic, ms

    def _axes(self, axes):
        return [a for a in self.mesh.axes if a in axes]

    def size(self, axes):
        return len(self.mesh.group(self.rank, self._axes(axes)))

    def index(self, axes):
        return self.mesh.group(self.rank, self._axes(axes)).index(self.rank)

    def _group_attrs(self, axes):
        axes = self._axes(axes)
        if self.generic:
            return dict(group_axes=axes)
        return dict(group=self.mesh.group(self.rank, axes))

    def _world(self, axes):
        return self.ms and self.size(axes) == self.mesh.size

    def allreduce(self, x, axes, reduce="sum", name="AllReduce"):
        if self.size(axes) == 1:
            return x
        if self._world(axes) and reduce == "sum":
            return self.g.node("AllReduce", [x], name, domain=MS_DOMAIN, group_size=self.mesh.size)
        return self.g.node("AllReduce", [x], name, domain=COMM_DOMAIN, reduce=reduce,
                           **self._group_attrs(axes))

    def allgather(self, x, axes, axis, name="AllGather"):
        if self.size(axes) == 1:
            return x
        if self._world(axes):
            return self.g.node("AllGather", [x], name, domain=MS_DOMAIN, group_size=self.mesh.size,
                               axis=axis)
        return self.g.node("AllGather", [x], name, domain=COMM_DOMAIN, axis=axis,
                           **self._group_attrs(axes))

    def reducescatter(self, x, axes, axis, length, name="ReduceScatter"):
        """Sum over the group, keep my chunk along `axis` (full length `length`)."""
        n = self.size(axes)
        if n == 1:
            return x
        if self._world(axes):
            full = self.g.node("AllReduce", [x], name, domain=MS_DOMAIN, group_size=self.mesh.size)
            c = length // n
            i = self.index(axes)
            g = self.g
            return g.node("Slice", [full, g.ints([i * c]), g.ints([(i + 1) * c]), g.ints([axis])],
                          name + "_own_chunk")
        return self.g.node("ReduceScatter", [x], name, domain=COMM_DOMAIN, axis=axis, reduce="sum",
                           **self._group_attrs(axes))

    def alltoall(self, x, axes, split_axis, concat_axis, name="AllToAll"):
        """Chunk j of x along split_axis to member j; the received chunks concatenated in group
        order along concat_axis."""
        if self.size(axes) == 1:
            return x
        return self.g.node("AllToAll", [x], name, domain=COMM_DOMAIN, split_axis=split_axis,
                           concat_axis=concat_axis, **self._group_attrs(axes))

    def _peer(self, axis, offset):
        if self.generic:
            return dict(peer_axis=axis, peer_offset=offset)
        c = dict(self.mesh.coords(self.rank))
        c[axis] += offset
        return dict(peer=self.mesh.rank(c))

    def send(self, x, axis, offset, tag, name="Send"):
        return self.g.node("Send", [x], name, domain=COMM_DOMAIN, tag=tag, **self._peer(axis, offset))

    def recv(self, axis, offset, tag, shape, name="Recv"):
        y = self.g.node("Recv", [], name, domain=COMM_DOMAIN, tag=tag, **self._peer(axis, offset))
        self.g.annotate(y, shape)
        return y
