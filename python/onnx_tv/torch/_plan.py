"""A plan exported from the user's own code: the spec, every rank's program, and plan.json.

    plan = Plan(Block(cfg), loss_fn, inputs=(x,), targets=(y,), mesh=Mesh(dp=2, tp=2))
    for rank in plan.ranks():                       # torch.distributed is this rank's now
        model = TPBlock(plan.model, group("tp"))   # the user's tensor-parallel code
        plan.add_rank(model, (shard(x, dp=0),), (shard(y, dp=0),), step=train_step)
    plan.write("out")                               # out/spec.onnx, out/shards/

Bindings are written for the user: parameters and inputs by how each rank's tensor sits in the
full one (_bindings.py), gradients `<p>.grad` as their parameter sits (a gradient is complete
where its parameter is; a partial gradient, such as one not all-reduced over data-parallel ranks,
is then refuted), and the loss by `loss=` (see Plan). Ranks whose programs are the same file
share one program entry, as plan-format section 4's SPMD form has it.
"""
import json
import os

import onnx
import torch

from ._bindings import bindings_for_value, check_given, region_of_piece
from ._export import step_program
from ._fake_dist import current_world, fake_distributed


class Plan:
    """The spec of `model`'s training step and, as they are added, the ranks' programs.

    `loss`: how each rank's `loss` output relates to the spec's: "mean" (default: the spec's loss
    is the mean of the ranks' losses over the mesh axes that split the batch, as for a mean loss
    under data parallelism; each rank's program gets an output `loss.share` = loss / count),
    "sum" (the spec's loss is their sum), "replicated" (every rank holds the whole loss), or None
    (the loss is not compared; the spec then has no loss output)."""

    def __init__(self, model, loss_fn, inputs, targets=(), mesh=None, input_names=None,
                 target_names=None, loss="mean", seed=0):
        if mesh is None:
            raise ValueError("a Plan needs a mesh, e.g. Mesh(dp=2, tp=2)")
        if loss not in ("mean", "sum", "replicated", None):
            raise ValueError("loss must be 'mean', 'sum', 'replicated' or None, not %r" % (loss,))
        self.model, self.mesh, self.loss = model, mesh, loss
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():  # distinct values, so that every shard is found at one place
            for p in model.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype))
        self.spec, self.spec_info = step_program(model, inputs, targets, loss_fn=loss_fn,
                                                 input_names=input_names,
                                                 target_names=target_names,
                                                 graph_name=type(model).__name__)
        if loss is None:
            _drop_output(self.spec, "loss")
        self.full = dict(self.spec_info.params)
        self.full.update(self.spec_info.inputs)
        self.input_names, self.target_names = input_names, target_names
        self.loss_fn = loss_fn
        self.programs = {}  # rank -> onnx model
        self.has_loss = {}  # rank -> whether its step returned a loss
        self.regions = {}   # value -> {rank: the block of the full tensor it holds}
        self.given = {}     # rank -> [bindings from the user's placements]

    def ranks(self):
        """Each rank of the mesh in turn, with torch.distributed faked as that rank's."""
        for r in range(self.mesh.size):
            with fake_distributed(self.mesh, r):
                yield r

    def add_rank(self, model, inputs, targets=(), step=None, placements=None):
        """Traces `model`'s training step as the current rank (inside ranks()). `step` is the
        user's step function (module, *inputs, *targets) -> loss or None; without it,
        loss_fn(model(*inputs), *targets).backward(). `placements` maps parameter or input
        names to placements (["Shard(0)", "Replicate()"]) or {"slice": [...]} where the values
        cannot tell."""
        w = current_world()
        if w is None:
            raise RuntimeError("add_rank is for use inside `for rank in plan.ranks():`")
        rank = w.rank
        self._full_unchanged(rank)
        prog, info = step_program(model, inputs, targets,
                                  loss_fn=None if step else self.loss_fn, step=step,
                                  input_names=self.input_names, target_names=self.target_names,
                                  graph_name=type(model).__name__)
        w.check_all_waited()
        placements = dict(placements or {})
        known = set(info.params) | set(info.inputs) | {n + ".grad" for n in info.params}
        unknown = sorted(set(placements) - known)
        if unknown:
            raise ValueError("placements given for %s, which rank %d's step has not (its "
                             "parameters, inputs and their .grad: %s)"
                             % (unknown, rank, ", ".join(sorted(known))))
        for kind, held in (("parameter", info.params), ("input", info.inputs)):
            for name, piece in held.items():
                if name not in self.full:
                    raise ValueError("rank %d's %s '%s' is not one of the full model's (%s)" %
                                     (rank, kind, name, ", ".join(sorted(self.full))))
                if name in placements:
                    given = placements[name]
                    b = {"rank": rank, "value": name, "spec": name}
                    b.update(given if isinstance(given, dict) else {"placements": list(given)})
                    check_given(b, kind, self.full[name], piece, self.mesh, rank)
                    self.given.setdefault(rank, []).append(b)
                    if kind == "parameter" and name + ".grad" not in placements:
                        self.given[rank].append(dict(b, value=name + ".grad", spec=name + ".grad"))
                    continue
                region = region_of_piece(kind, name, self.full[name], piece, rank)
                self.regions.setdefault(name, {})[rank] = region
                if kind == "parameter" and name + ".grad" not in placements:
                    # a gradient is complete where its parameter is
                    self.regions.setdefault(name + ".grad", {})[rank] = region
        for name in info.params:  # a gradient's own placement, as given (ZeRO, later reduction)
            if name + ".grad" in placements:
                given = placements[name + ".grad"]
                b = {"rank": rank, "value": name + ".grad", "spec": name + ".grad"}
                b.update(given if isinstance(given, dict) else {"placements": list(given)})
                self.given.setdefault(rank, []).append(b)
        self.programs[rank] = prog
        self.has_loss[rank] = "loss" in info.outputs
        return prog

    def _full_unchanged(self, rank):
        """Shards are located in the values Plan() drew; code that writes into the full model
        afterwards (a per-rank re-initialisation) would cut its shards from another tensor."""
        for name, p in self.model.named_parameters():
            if name in self.full and not torch.equal(p.detach(), self.full[name]):
                raise ValueError(
                    "the full model's parameter '%s' changed after Plan() drew its values (by "
                    "rank %d's code or before it): shards must be cut from the full weights "
                    "as they are, not re-initialised" % (name, rank))

    def _bindings(self):
        shapes = {n: list(t.shape) for n, t in self.full.items()}
        shapes.update({n + ".grad": list(self.full[n].shape) for n in self.spec_info.params})
        out = []
        for name, regions in self.regions.items():
            out += bindings_for_value(name, name, shapes[name], regions, self.mesh)
        for r in sorted(self.given):
            out += self.given[r]
        batch_axes = sorted({a for b in out if b["value"] in self.spec_info.inputs
                             for a, p in enumerate(b.get("placements", [])) if p != "Replicate()"})
        if any(b["value"] in self.spec_info.inputs and "slice" in b for b in out):
            batch_axes = None  # an input split other than by placements
        for r in sorted(self.programs):
            if self.has_loss[r]:
                out.append(self._loss_binding(self.programs[r], r, batch_axes))
        return [b for b in out if b is not None]

    def _loss_binding(self, prog, rank, batch_axes):
        if self.loss is None:
            _drop_output(prog, "loss")
            return None
        if self.loss == "replicated":
            return {"rank": rank, "value": "loss", "spec": "loss"}
        if batch_axes is None:
            raise ValueError("the inputs are split by slices that no placements describe, so "
                             "how the ranks' losses make up the spec's is not known: give "
                             "Plan(loss='replicated') if every rank holds the whole loss, or "
                             "loss=None to leave the loss out")
        if not batch_axes:
            return {"rank": rank, "value": "loss", "spec": "loss"}
        pl = ["Partial()" if a in batch_axes else "Replicate()" for a in range(len(self.mesh.axes))]
        value = "loss"
        if self.loss == "mean":
            count = 1
            for a in batch_axes:
                count *= self.mesh.shape[a]
            value = _append_share(prog, count)
        return {"rank": rank, "value": value, "spec": "loss", "placements": pl}

    def write(self, folder):
        """Writes folder/spec.onnx and folder/shards/ (programs and plan.json); returns the
        (spec path, shards path)."""
        missing = [r for r in range(self.mesh.size) if r not in self.programs]
        if missing:
            raise ValueError("ranks %s have no program: call add_rank for each" % missing)
        shards = os.path.join(folder, "shards")
        os.makedirs(shards, exist_ok=True)
        spec_path = os.path.join(folder, "spec.onnx")
        onnx.save(self.spec, spec_path)
        bindings = self._bindings()
        files, entries = {}, []
        for r in range(self.mesh.size):
            blob = self.programs[r].SerializeToString()
            if blob not in files:
                files[blob] = "program%d.onnx" % len(files)
                entries.append({"file": files[blob], "ranks": []})
                with open(os.path.join(shards, files[blob]), "wb") as f:
                    f.write(blob)
            next(e for e in entries if e["file"] == files[blob])["ranks"].append(r)
        plan = {"format": "onnx-tv.plan/1", "world_size": self.mesh.size,
                "mesh": {"axes": self.mesh.axes, "shape": self.mesh.shape},
                "programs": entries, "bindings": _merged(bindings)}
        with open(os.path.join(shards, "plan.json"), "w") as f:
            json.dump(plan, f, indent=1)
            f.write("\n")
        return spec_path, shards


def _merged(bindings):
    """One binding with a rank list for bindings that differ only in their rank."""
    groups = {}
    for b in bindings:
        key = json.dumps({k: v for k, v in b.items() if k not in ("rank", "ranks")}, sort_keys=True)
        groups.setdefault(key, []).extend(b["ranks"] if "ranks" in b else [b["rank"]])
    out = []
    for key, ranks in groups.items():
        b = json.loads(key)
        ranks = sorted(set(ranks))
        out.append(dict({"ranks": ranks} if len(ranks) > 1 else {"rank": ranks[0]}, **b))
    return out


def _drop_output(model, name):
    keep = [o for o in model.graph.output if o.name != name]
    del model.graph.output[:]
    model.graph.output.extend(keep)


def _append_share(model, count):
    """Adds output `loss.share` = loss / count to a rank's program (its addend of the mean)."""
    g = model.graph
    loss = next(o for o in g.output if o.name == "loss")
    elem = loss.type.tensor_type.elem_type
    c = onnx.helper.make_tensor("loss.share/count", elem, [], [float(count)])
    g.initializer.append(c)
    g.node.append(onnx.helper.make_node("Div", ["loss", "loss.share/count"], ["loss.share"],
                                        name="/loss.share"))
    _drop_output(model, "loss")
    g.output.append(onnx.helper.make_tensor_value_info("loss.share", elem, []))
    return "loss.share"
