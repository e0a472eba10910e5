"""onnx-tv model zoo: Llama-3 style specs with their backward pass, parallel plans, seeded bugs,
and an independent numeric runner (numeric.py) that checks every plan in float64."""
