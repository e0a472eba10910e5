"""The pieces of the structural mutation campaign (tools/fuzz/mutate_plans.py, the command
line): a bundled case under models/ is copied and damaged the way a hostile or careless exporter
would damage it, then checked by onnx-tv, which must answer with a verdict or an input error.

  cases        the cases under models/ and the copy being mutated; Skip
  hostile      hostile values: huge and odd numbers, names, element types, JSON
  bytes_files  raw bytes of any file, and the program files of the shards folder
  onnx_edit    what the ONNX mutations share: op lists, loading, writing back
  onnx_nodes   nodes: dropped, duplicated, reordered, op types, attributes, inputs, outputs
  onnx_graph   graph inputs and outputs, shapes, tensors, opset imports
  bindings     a binding damaged (plan.json or metadata); the metadata bindings
  plan_json    plan.json: keys, values, world_size, bindings, mesh, programs
  mutant       the table of mutation kinds and make_mutant (one seed, one mutant)
  runner       running the binary, classifying its answer, saving findings
"""
