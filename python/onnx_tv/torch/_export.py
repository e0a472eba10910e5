"""One training step of a module, forward and backward, as an ONNX program.

The program's inputs are the module's parameters under their own names (`attn.wq.weight`) and
the step's data inputs (`x`, `y` or the names given); its outputs are `loss` and one
`<param>.grad` per parameter: what `.grad` holds when the step returns. The step is either
`loss_fn(module(*inputs), *targets)` followed by `loss.backward()`, or the user's own function
`step(module, *inputs, *targets)` that calls backward itself (and may all-reduce or scale the
gradients, send and receive activations) and returns the loss, or None on a pipeline stage that
has none. The same function exports the single-device spec and, inside `fake_distributed`,
each rank's program of a plan."""
import contextlib

import torch

from ._convert import to_onnx
from ._trace import trace


def _names(n, given, base):
    if given is None:
        return [base] if n == 1 else ["%s%d" % (base, i) for i in range(n)]
    if len(given) != n:
        raise ValueError("%d names given for %d %ss" % (len(given), n, base))
    return list(given)


@contextlib.contextmanager
def _parameters_replaced(module, replacement):
    """Every place the module holds a parameter (tied ones included) holds its replacement."""
    saved = []
    for m in module.modules():
        for k, p in list(m._parameters.items()):
            if p is not None and id(p) in replacement:
                saved.append((m, k, p))
                m._parameters[k] = replacement[id(p)]
    try:
        yield
    finally:
        for m, k, p in saved:
            m._parameters[k] = p


class StepInfo:
    """What a traced step's graph inputs hold (for bindings) and its output names."""

    def __init__(self, params, inputs, outputs):
        self.params, self.inputs, self.outputs = params, inputs, outputs


def step_program(module, inputs, targets=(), loss_fn=None, step=None, input_names=None,
                 target_names=None, graph_name="step"):
    """(onnx.ModelProto, StepInfo) of one training step of `module`."""
    if (loss_fn is None) == (step is None):
        raise ValueError("give either loss_fn or step")
    inputs, targets = tuple(inputs), tuple(targets)
    params = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    pnames = [n for n, _ in params]
    in_names = _names(len(inputs), input_names, "x")
    tg_names = _names(len(targets), target_names, "y")
    has_loss = []

    def run(*flat):
        ps = flat[:len(params)]
        xs = flat[len(params):len(params) + len(inputs)]
        ys = flat[len(params) + len(inputs):]
        with _parameters_replaced(module, {id(p): q for (_, p), q in zip(params, ps)}):
            if step is not None:
                loss = step(module, *xs, *ys)
            else:
                loss = loss_fn(module(*xs), *ys)
                loss.backward()
        grads = [torch.zeros_like(p) if p.grad is None else p.grad for p in ps]
        has_loss.append(loss is not None)
        return ([loss] if loss is not None else []) + grads

    # Clones: the step may change its inputs in place, and the trace runs it twice.
    args = [p.detach().clone().requires_grad_(True) for _, p in params] + \
        [t.detach().clone() for t in inputs + targets]
    gm = trace(run, args, modules=[module])
    outs = (["loss"] if has_loss[-1] else []) + [n + ".grad" for n in pnames]
    model = to_onnx(gm, pnames + in_names + tg_names, outs, graph_name=graph_name)
    info = StepInfo(params={n: p.detach().clone() for n, p in params},
                    inputs=dict(zip(in_names + tg_names,
                                    [t.detach().clone() for t in inputs + targets])),
                    outputs=outs)
    return model, info


def export_step(module, loss_fn, inputs, targets=(), path=None, input_names=None,
                target_names=None):
    """Exports one training step (loss_fn(module(*inputs), *targets), then backward) as ONNX,
    written to `path` when given; returns the onnx.ModelProto."""
    model, _ = step_program(module, inputs, targets, loss_fn=loss_fn, input_names=input_names,
                            target_names=target_names, graph_name=type(module).__name__)
    if path is not None:
        import onnx
        onnx.save(model, path)
    return model
