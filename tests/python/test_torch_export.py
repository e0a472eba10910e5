"""onnx_tv.torch's spec export: a real PyTorch module's training step, forward and backward,
written as ONNX whose values are torch's own (loss and every .grad), with node names taken from
the user's modules."""
import os
import sys
import tempfile
import unittest

import numpy as np
import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "models", "torch"))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import llama_block as L  # noqa: E402
import onnx_tv.torch as ott  # noqa: E402
from zoo import numeric  # noqa: E402


def run_onnx(model, feeds):
    values = numeric.initializers(model)
    values.update({k: np.asarray(v, np.float64) for k, v in feeds.items()})
    return numeric.run_graph(model, values)


class SpecExport(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.cfg = L.Config()
        self.block = L.Block(self.cfg)
        with torch.no_grad():  # norms away from 1, so their gradients are checked too
            for p in self.block.parameters():
                p.add_(0.1 * torch.randn(p.shape))
        self.x = torch.randn(2, self.cfg.seq, self.cfg.dim)
        self.y = torch.randn(2, self.cfg.seq, self.cfg.dim)

    def test_interface_names(self):
        m = ott.export_step(self.block, L.loss_fn, (self.x,), (self.y,))
        onnx.checker.check_model(m, full_check=True)
        params = [n for n, _ in self.block.named_parameters()]
        self.assertEqual([i.name for i in m.graph.input], params + ["x", "y"])
        self.assertEqual([o.name for o in m.graph.output], ["loss"] + [p + ".grad" for p in params])

    def test_values_are_torchs(self):
        """The exported program, run in float64, gives torch's loss and .grad (float64 torch)."""
        m = ott.export_step(self.block, L.loss_fn, (self.x,), (self.y,))
        ref = L.Block(self.cfg).double()
        ref.load_state_dict(self.block.state_dict())
        loss = L.loss_fn(ref(self.x.double()), self.y.double())
        loss.backward()
        feeds = {n: p.detach().double().numpy() for n, p in ref.named_parameters()}
        feeds.update(x=self.x.double().numpy(), y=self.y.double().numpy())
        got = run_onnx(m, feeds)
        self.assertAlmostEqual(float(got["loss"]), float(loss), delta=1e-6 * abs(float(loss)))
        for n, p in ref.named_parameters():
            want = p.grad.numpy()
            err = np.abs(got[n + ".grad"] - want).max() / np.abs(want).max()
            self.assertLess(err, 1e-6, n)  # the float32 rope tables differ from float64's

    def test_nodes_named_after_modules(self):
        m = ott.export_step(self.block, L.loss_fn, (self.x,), (self.y,))
        names = [n.name for n in m.graph.node]
        for scope in ("/attn/wq/", "/ffn/w2/", "/attn_norm/", "/ffn/w1/backward/",
                      "/attn/backward/"):
            self.assertTrue(any(n.startswith(scope) for n in names), scope)

    def test_written_to_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "spec.onnx")
            ott.export_step(self.block, L.loss_fn, (self.x,), (self.y,), path=path)
            self.assertEqual(onnx.load(path).graph.output[0].name, "loss")

    def test_unsupported_op_names_op_and_module(self):
        class Odd(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.randn(4))

            def forward(self, x):
                return torch.cumprod(x * self.w, dim=-1)

        with self.assertRaises(ott.ExportError) as e:
            ott.export_step(Odd(), lambda o: o.sum(), (torch.randn(3, 4),))
        self.assertIn("cumprod", str(e.exception))

    def test_inputs_changed_in_place_are_not_the_users(self):
        """A forward that scales its input in place: exported as written, and the caller's
        tensor is left alone (the step is traced on copies, twice)."""
        class Scales(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.randn(4))

            def forward(self, x):
                x.mul_(2)
                return x * self.w

        x = torch.randn(4)
        before = x.clone()
        m = Scales()
        model = ott.export_step(m, lambda o: o.sum(), (x,))
        self.assertTrue(torch.equal(x, before))
        got = run_onnx(model, {"w": m.w.detach().double().numpy(), "x": x.double().numpy()})
        np.testing.assert_allclose(got["w.grad"], 2 * x.double().numpy(), rtol=1e-12)

    def test_state_updated_in_forward_is_refused(self):
        class Ema(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.randn(4))
                self.register_buffer("avg", torch.zeros(4))

            def forward(self, x):
                self.avg.mul_(0.9).add_(0.1 * x.detach())
                return x * self.w

        with self.assertRaises(ott.ExportError) as e:
            ott.export_step(Ema(), lambda o: o.sum(), (torch.randn(4),))
        self.assertIn("in place", str(e.exception))

    def test_uninitialised_read_is_refused(self):
        class ReadsEmpty(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.randn(4))

            def forward(self, x):
                return (torch.empty(4) + x * self.w).sum()

        with self.assertRaises(ott.ExportError) as e:
            ott.export_step(ReadsEmpty(), lambda o: o, (torch.randn(4),))
        self.assertIn("uninitialised", str(e.exception))


if __name__ == "__main__":
    unittest.main()
