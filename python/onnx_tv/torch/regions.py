"""Autograd-aware collectives in the forms Megatron-LM's tensor-parallel mappings have, over
torch.distributed (so they run for real in a job, and trace into onnx_tv ops inside
`fake_distributed`). Each is a pair: what the forward does, and what its backward does.

| function | forward | backward |
|---|---|---|
| copy_to_region | identity | all-reduce |
| reduce_from_region | all-reduce | identity |
| scatter_to_region | keep this rank's chunk of the last dim | all-gather along the last dim |
| gather_from_region | all-gather along the last dim | keep this rank's chunk |
| scatter_to_sequence_region | keep this rank's chunk of dim 0 | all-gather along dim 0 |
| gather_from_sequence_region | all-gather along dim 0 | reduce-scatter along dim 0 |
| reduce_scatter_to_sequence_region | reduce-scatter along dim 0 | all-gather along dim 0 |
| all_reduce | all-reduce | all-reduce (torch.distributed.nn's form) |
"""
import torch
import torch.distributed as dist


def _all_reduce(x, group):
    x = x.clone()
    dist.all_reduce(x, group=group)
    return x


def _gather(x, group, dim):
    n = dist.get_world_size(group)
    if n == 1:
        return x
    x = x.movedim(dim, 0).contiguous()
    out = torch.empty((n * x.shape[0],) + tuple(x.shape[1:]), dtype=x.dtype)
    dist.all_gather_into_tensor(out, x, group=group)
    return out.movedim(0, dim)


def _reduce_scatter(x, group, dim):
    n = dist.get_world_size(group)
    if n == 1:
        return x
    x = x.movedim(dim, 0).contiguous()
    out = torch.empty((x.shape[0] // n,) + tuple(x.shape[1:]), dtype=x.dtype)
    dist.reduce_scatter_tensor(out, x, group=group)
    return out.movedim(0, dim)


def _chunk(x, group, dim):
    n, r = dist.get_world_size(group), dist.get_rank(group)
    return x.chunk(n, dim=dim)[r].clone()


class _Pair(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group, fwd, bwd):
        ctx.group, ctx.bwd = group, bwd
        return fwd(x, group)

    @staticmethod
    def backward(ctx, g):
        return ctx.bwd(g, ctx.group), None, None, None


def _identity(x, group):
    return x


def copy_to_region(x, group):
    return _Pair.apply(x, group, _identity, _all_reduce)


def reduce_from_region(x, group):
    return _Pair.apply(x, group, _all_reduce, _identity)


def scatter_to_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _chunk(t, g, -1), lambda t, g: _gather(t, g, -1))


def gather_from_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _gather(t, g, -1), lambda t, g: _chunk(t, g, -1))


def scatter_to_sequence_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _chunk(t, g, 0), lambda t, g: _gather(t, g, 0))


def gather_from_sequence_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _gather(t, g, 0),
                       lambda t, g: _reduce_scatter(t, g, 0))


def reduce_scatter_to_sequence_region(x, group):
    return _Pair.apply(x, group, lambda t, g: _reduce_scatter(t, g, 0),
                       lambda t, g: _gather(t, g, 0))


def all_reduce(x, group):
    return _Pair.apply(x, group, _all_reduce, _all_reduce)
