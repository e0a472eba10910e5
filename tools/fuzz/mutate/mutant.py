"""One mutant from one seed: the table of mutation kinds with their weights, and make_mutant,
which picks a case, copies it and applies 1 to 3 mutations drawn from the table."""
import os
import random
import shutil

from . import bindings, bytes_files, onnx_graph, onnx_nodes, plan_json
from .cases import MODELS, Case, Skip

# kind -> (weight, mutation). Raw bytes are weighted low: most damaged protobufs stop at the
# parser, and the point is to reach the checker's later stages with inputs that parse.
MUTATIONS = {
    "bytes.flip": (3, bytes_files.m_bytes_flip),
    "bytes.overwrite": (2, bytes_files.m_bytes_overwrite),
    "bytes.truncate": (2, bytes_files.m_bytes_truncate),
    "bytes.append": (2, bytes_files.m_bytes_append),
    "bytes.empty": (1, bytes_files.m_bytes_empty),
    "bytes.to_dir": (1, bytes_files.m_bytes_to_dir),
    "onnx.drop_node": (5, onnx_nodes.onnx_drop_node),
    "onnx.dup_node": (4, onnx_nodes.onnx_dup_node),
    "onnx.reorder": (4, onnx_nodes.onnx_reorder),
    "onnx.op_type": (8, onnx_nodes.onnx_op_type),
    "onnx.domain": (3, onnx_nodes.onnx_domain),
    "onnx.attr": (12, onnx_nodes.onnx_attr),
    "onnx.node_io": (8, onnx_nodes.onnx_node_io),
    "onnx.graph_io": (4, onnx_graph.onnx_graph_io),
    "onnx.shape": (8, onnx_graph.onnx_shape),
    "onnx.tensor": (8, onnx_graph.onnx_tensor),
    "onnx.opset": (3, onnx_graph.onnx_opset),
    "onnx.metadata": (4, bindings.onnx_metadata),
    "plan.del_key": (3, plan_json.m_plan_del_key),
    "plan.value": (4, plan_json.m_plan_value),
    "plan.world_size": (2, plan_json.m_plan_world),
    "plan.binding": (8, plan_json.m_plan_binding),
    "plan.mesh": (3, plan_json.m_plan_mesh),
    "plan.programs": (3, plan_json.m_plan_programs),
    "plan.create": (2, plan_json.m_plan_create),
    "files.delete": (2, bytes_files.m_files_delete),
    "files.extra": (2, bytes_files.m_files_extra),
    "files.rename": (2, bytes_files.m_files_rename),
}


def make_mutant(seed, folder, cases):
    """Copies case number rng-chosen into folder and mutates it; returns (case, [(kind, what)],
    no_reduce). Deterministic in seed: the same seed gives the same files."""
    rng = random.Random(seed)
    spec, shards = cases[rng.randrange(len(cases))]
    os.makedirs(folder)
    shutil.copyfile(os.path.join(MODELS, spec), os.path.join(folder, "spec.onnx"))
    shutil.copytree(os.path.join(MODELS, shards), os.path.join(folder, "shards"))
    case = Case(folder)
    kinds = sorted(MUTATIONS)
    weights = [MUTATIONS[k][0] for k in kinds]
    done = []
    for _ in range(rng.choices([1, 2, 3], [5, 3, 2])[0]):
        for _attempt in range(30):
            kind = rng.choices(kinds, weights)[0]
            try:
                done.append((kind, MUTATIONS[kind][1](rng, case)))
                break
            except Skip:
                continue
    no_reduce = rng.random() < 0.25
    return (spec, shards), done, no_reduce
