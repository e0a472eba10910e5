#!/usr/bin/python3
"""Writes models/embedding/: an embedding lookup by int64 token ids, the first op of every LLM
export, as a spec and plans written in the plan format.

spec: y = Gather(W, ids) @ P, with ids[4, 3] int64 token ids (a graph input, ranging over the
16 rows of W), W[16, 4] and P[4, 2] float inputs.
dp2: two ranks, each with two rows of ids and the whole of W and P.
tp2_vocab: the vocabulary-parallel embedding of Megatron-LM: rank r holds rows [8r, 8r + 8)
of W, masks the ids outside them (Less, GreaterOrEqual, Or), shifts the others, looks them up,
zeroes the masked rows and all-reduces.
tp2_vocab_off_by_one: the same with rank 1's first row taken as 7 (a wrong offset).
dp2_float_ids: dp2 with the ranks' ids declared float (an input error: a rank input holds the
spec's values, of the same kind).
tp2_vocab_unmasked: the same without zeroing the masked rows (every rank adds row 0 for ids it
does not hold).
"""
import os
import sys

from onnx import TensorProto, helper, save

from make_soundness import model, vi  # the same ONNX helpers

F, I64 = TensorProto.FLOAT, TensorProto.INT64
B, S, V, H, O = 4, 3, 16, 4, 2
N = helper.make_node


def const(name, value, t=I64):
    return N("Constant", [], [name], name="/" + name,
             value=helper.make_tensor(name + "_v", t, [], [value]))


def spec():
    return model([N("Gather", ["W", "ids"], ["e"], name="/embed/Gather"),
                  N("MatMul", ["e", "P"], ["y"], name="/proj/MatMul")],
                 [vi("ids", [B, S], I64), vi("W", [V, H]), vi("P", [H, O])], [vi("y", [B, S, O])])


def dp_rank(r, ids_type=I64):
    b = B // 2
    binds = [{"value": "ids_local", "spec": "ids", "slice": [[r * b, r * b + b], None]},
             {"value": "W", "spec": "W"}, {"value": "P", "spec": "P"},
             {"value": "y_local", "spec": "y", "slice": [[r * b, r * b + b], None, None]}]
    return model([N("Gather", ["W", "ids_local"], ["e"], name="/embed/Gather"),
                  N("MatMul", ["e", "P"], ["y_local"], name="/proj/MatMul")],
                 [vi("ids_local", [b, S], ids_type), vi("W", [V, H]), vi("P", [H, O])],
                 [vi("y_local", [B // 2, S, O])], binds)


def vocab_rank(r, start, mask_output=True):
    v = V // 2
    nodes = [const("start", start), const("end", start + v), const("zero", 0),
             N("Less", ["ids", "start"], ["below"], name="/embed/Less"),
             N("GreaterOrEqual", ["ids", "end"], ["above"], name="/embed/GreaterOrEqual"),
             N("Or", ["below", "above"], ["outside"], name="/embed/Or"),
             N("Sub", ["ids", "start"], ["shifted"], name="/embed/Sub"),
             N("Where", ["outside", "zero", "shifted"], ["local"], name="/embed/Where_ids"),
             N("Gather", ["W_local", "local"], ["e_all"], name="/embed/Gather")]
    if mask_output:
        nodes += [const("axis", -1), const("zero_f", 0.0, F),
                  N("Unsqueeze", ["outside", "axis"], ["outside_h"], name="/embed/Unsqueeze"),
                  N("Where", ["outside_h", "zero_f", "e_all"], ["e_part"], name="/embed/Where_rows")]
    else:
        nodes += [N("Identity", ["e_all"], ["e_part"], name="/embed/Identity")]
    nodes += [N("AllReduce", ["e_part"], ["e"], domain="onnx_tv", name="/embed/AllReduce",
                group=[0, 1]),
              N("MatMul", ["e", "P"], ["y"], name="/proj/MatMul")]
    binds = [{"value": "ids", "spec": "ids"},
             {"value": "W_local", "spec": "W", "slice": [[r * v, r * v + v], None]},
             {"value": "P", "spec": "P"}, {"value": "y", "spec": "y"}]
    return model(nodes, [vi("ids", [B, S], I64), vi("W_local", [v, H]), vi("P", [H, O])],
                 [vi("y", [B, S, O])], binds, comm=True)


def write(folder, shards):
    os.makedirs(folder, exist_ok=True)
    save(spec(), os.path.join(folder, "spec.onnx"))
    for name, ranks in shards.items():
        d = os.path.join(folder, name)
        os.makedirs(d, exist_ok=True)
        for r, m in enumerate(ranks):
            save(m, os.path.join(d, f"rank{r}.onnx"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "embedding")
    v = V // 2
    write(out, {
        "dp2": [dp_rank(r) for r in range(2)],
        "dp2_float_ids": [dp_rank(r, F) for r in range(2)],
        "tp2_vocab": [vocab_rank(r, r * v) for r in range(2)],
        "tp2_vocab_off_by_one": [vocab_rank(0, 0), vocab_rank(1, v - 1)],
        "tp2_vocab_unmasked": [vocab_rank(r, r * v, mask_output=False) for r in range(2)],
    })


if __name__ == "__main__":
    main()
