"""Training on token ids and class labels from PyTorch: nn.Embedding and F.cross_entropy on
int64 labels, forward and backward (embedding_dense_backward, nll_loss_forward/backward), as
onnx_tv.torch writes them. Each export is run in float64 by the zoo's numeric runner against
torch's own loss and gradients; then a data-parallel plan of the user's step is EQUIVALENT and
its seeded bugs NOT EQUIVALENT."""
import math
import os
import sys
import tempfile
import unittest

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import onnx_tv  # noqa: E402
import onnx_tv.torch as ott  # noqa: E402
from zoo import numeric  # noqa: E402

V, H = 8, 4


class TinyLM(torch.nn.Module):
    def __init__(self, padding_idx=None):
        super().__init__()
        self.embed = torch.nn.Embedding(V, H, padding_idx=padding_idx)
        self.head = torch.nn.Linear(H, V, bias=False)

    def forward(self, ids):
        return self.head(torch.tanh(self.embed(ids)))


def loss_fn(reduction="mean", ignore_index=-100):
    def f(logits, labels):
        return F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), reduction=reduction,
                               ignore_index=ignore_index)
    return f


class LookupsAgreeWithTorch(unittest.TestCase):
    CASES = {
        "mean": (None, loss_fn()),
        "sum": (None, loss_fn("sum")),
        "ignore_index_in_range": (None, loss_fn(ignore_index=3)),
        "padding_idx": (2, loss_fn()),
        "per_row_losses": (None, lambda logits, labels: (F.cross_entropy(
            logits.reshape(-1, V), labels.reshape(-1), reduction="none") *
            torch.arange(6.0)).sum()),
        "one_dimensional_input": (None, lambda logits, labels: F.nll_loss(
            F.log_softmax(logits[0, 0], -1), labels[0, 0])),
    }

    def test_each(self):
        for name, (padding_idx, loss) in self.CASES.items():
            with self.subTest(case=name):
                torch.manual_seed(0)
                m = TinyLM(padding_idx)
                ids = torch.tensor([[1, 2, 3], [2, 5, 7]])
                labels = torch.tensor([[3, 0, 3], [7, 1, 2]])
                model = ott.export_step(m, loss, (ids,), (labels,), input_names=["ids"],
                                        target_names=["labels"])
                ref = TinyLM(padding_idx).double()
                ref.load_state_dict(m.state_dict())
                want = loss(ref(ids), labels)
                want.backward()
                feeds = numeric.initializers(model)
                feeds.update({n: p.detach().double().numpy() for n, p in m.named_parameters()})
                feeds.update(ids=ids.numpy(), labels=labels.numpy())
                got = numeric.run_graph(model, feeds)
                self.assertTrue(math.isclose(float(got["loss"]), float(want), rel_tol=1e-9),
                                (float(got["loss"]), float(want)))
                for n, p in ref.named_parameters():
                    np.testing.assert_allclose(got[n + ".grad"], p.grad.numpy(), rtol=1e-9,
                                               atol=1e-12, err_msg=n)

    def test_ops_the_prover_reads_by_indicators(self):
        m = TinyLM()
        model = ott.export_step(m, loss_fn(), (torch.tensor([[1, 2]]),), (torch.tensor([[0, 1]]),))
        ops = {n.op_type for n in model.graph.node}
        self.assertTrue({"Gather", "GatherElements", "OneHot", "ScatterND"} <= ops, ops)


def dp_step(n_divisor=None, reduce_embedding=True):
    def step(model, ids, labels):
        loss = loss_fn()(model(ids), labels)
        loss.backward()
        dp = ott.group("dp")
        n = dist.get_world_size(dp) if n_divisor is None else n_divisor
        for name, p in model.named_parameters():
            if reduce_embedding or not name.startswith("embed"):
                dist.all_reduce(p.grad, group=dp)
            p.grad /= n
        return loss
    return step


class DataParallelTraining(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ids = torch.tensor([[1, 2, 3], [2, 5, 7], [0, 4, 6], [7, 7, 1]])
        self.labels = torch.tensor([[3, 0, 3], [7, 1, 2], [5, 5, 0], [1, 2, 6]])

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, step):
        torch.manual_seed(0)
        plan = ott.Plan(TinyLM(), loss_fn(), (self.ids,), (self.labels,), mesh=ott.Mesh(dp=2),
                        input_names=["ids"], target_names=["labels"])
        # Token ids repeat, so their place in the batch is given, not found from the values.
        batch = {"ids": ["Shard(0)"], "labels": ["Shard(0)"]}
        for _ in plan.ranks():
            plan.add_rank(plan.model, (ott.shard(self.ids, dp=0),), (ott.shard(self.labels, dp=0),),
                          step=step, placements=batch)
        spec, shards = plan.write(self.tmp.name)
        return onnx_tv.check(spec, shards)

    def test_data_parallel_step_is_proven(self):
        r = self.check(dp_step())
        self.assertEqual(r.verdict, "EQUIVALENT", r.text)

    def test_embedding_gradient_not_all_reduced_is_refuted(self):
        r = self.check(dp_step(reduce_embedding=False))
        self.assertEqual(r.verdict, "NOT EQUIVALENT", r.text)
        self.assertIn("embed.weight.grad", r.report["failing_outputs"], r.text)

    def test_gradients_averaged_by_the_wrong_n_are_refuted(self):
        r = self.check(dp_step(n_divisor=4))
        self.assertEqual(r.verdict, "NOT EQUIVALENT", r.text)


if __name__ == "__main__":
    unittest.main()
