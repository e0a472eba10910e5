"""Exports the Llama-style block of llama_block.py under data and tensor parallelism and checks
it: the example of docs/pytorch.md.

    /usr/bin/python3 models/torch/check_llama_block.py OUT_DIR [--bug missing-all-reduce|wrong-n]

Exits with the verdict's code (0 EQUIVALENT, 1 NOT EQUIVALENT)."""
import argparse
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_block as L  # noqa: E402
import onnx_tv  # noqa: E402
import onnx_tv.torch as ott  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="folder for spec.onnx and shards/")
    ap.add_argument("--bug", choices=["missing-all-reduce", "wrong-n"])
    args = ap.parse_args()
    if args.bug == "missing-all-reduce":  # Megatron's f without its backward all-reduce
        L._CopyToRegion.backward = staticmethod(lambda ctx, g: (g, None))

    torch.manual_seed(0)
    cfg = L.Config()
    x, y = torch.randn(4, cfg.seq, cfg.dim), torch.randn(4, cfg.seq, cfg.dim)

    def train_step(model, x, y):  # the user's step: backward, then average gradients over dp
        loss = L.loss_fn(model(x), y)
        loss.backward()
        dp = ott.group("dp")
        n = 4 if args.bug == "wrong-n" else dist.get_world_size(dp)
        for p in model.parameters():
            dist.all_reduce(p.grad, group=dp)
            p.grad /= n
        return loss

    plan = ott.Plan(L.Block(cfg), L.loss_fn, (x,), (y,), mesh=ott.Mesh(dp=2, tp=2))
    for _ in plan.ranks():
        model = L.TPBlock(plan.model, ott.group("tp"))
        plan.add_rank(model, (ott.shard(x, dp=0),), (ott.shard(y, dp=0),), step=train_step)
    spec, shards = plan.write(args.out)
    result = onnx_tv.check(spec, shards)
    print(result.text, end="")
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
