"""Writes models/edge_cases cases exported from PyTorch user code by onnx_tv.torch, for the
prover's end-to-end tests. Needs the built package: PYTHONPATH=build/python.

flat_bucket: data parallelism whose gradient all-reduce goes through one flat bucket, as DDP
  does it (the gradients flattened, concatenated, all-reduced, divided and viewed back); shape
  reduction once failed an assertion on it (a factor split earlier in the same unification).
  shards_wrong divides the bucket by 4 instead of 2.
"""
import os
import shutil
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

import onnx_tv.torch as ott


class MLP(torch.nn.Module):
    def __init__(self, d=4, h=8):
        super().__init__()
        self.w1 = torch.nn.Linear(d, h, bias=False)
        self.w2 = torch.nn.Linear(h, d, bias=False)

    def forward(self, x):
        return self.w2(torch.tanh(self.w1(x)))


def bucket_step(divisor):
    def step(model, x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        ps = list(model.parameters())
        flat = torch.cat([p.grad.reshape(-1) for p in ps])
        dist.all_reduce(flat, group=ott.group("dp"))
        flat /= divisor
        o = 0
        for p in ps:
            p.grad.copy_(flat[o:o + p.numel()].view_as(p))
            o += p.numel()
        return loss
    return step


def flat_bucket(out):
    torch.manual_seed(0)
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    for shards, divisor in (("shards", 2), ("shards_wrong", 4)):
        plan = ott.Plan(MLP(), F.mse_loss, (x,), (y,), mesh=ott.Mesh(dp=2))
        for _ in plan.ranks():
            m = MLP()
            m.w1, m.w2 = plan.model.w1, plan.model.w2
            plan.add_rank(m, (ott.shard(x, dp=0),), (ott.shard(y, dp=0),),
                          step=bucket_step(divisor))
        tmp = out + ".tmp"
        plan.write(tmp)
        os.makedirs(out, exist_ok=True)
        shutil.copy(os.path.join(tmp, "spec.onnx"), os.path.join(out, "spec.onnx"))
        shutil.rmtree(os.path.join(out, shards), ignore_errors=True)
        shutil.move(os.path.join(tmp, "shards"), os.path.join(out, shards))
        shutil.rmtree(tmp)


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "edge_cases")
    flat_bucket(os.path.join(root, "flat_bucket"))
