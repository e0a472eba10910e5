"""Ground truth and verdicts for one case, and the class of their disagreement.

Ground truth is the numeric runner (tools/zoo/numeric.py) at full size in float64, on two
random draws, with float constants read by their meaning and constant-only values folded
exactly. A plan agrees when every output is within AGREE_TOL (relative to the output's largest
entry) on both draws, and clearly disagrees when some output is off by DISAGREE_TOL or more (or
a NaN or infinity differs); in between the float64 run cannot tell and the case is "unclear".
A float64 run that takes longer than NUMERIC_TIMEOUT (full-size products of thousands by
thousands) decides nothing either: the case is "unclear" and the campaign goes on.
"""
import os
import signal
import subprocess

import onnx

from zoo import numeric

AGREE_TOL = 1e-8
DISAGREE_TOL = 1e-5
TIMEOUT = 20
NUMERIC_TIMEOUT = 60
ABS_FLOOR = 1e-6  # inputs are of size 1: outputs that vanish over the reals are rounding noise
VERDICT = {0: "EQUIVALENT", 1: "NOT EQUIVALENT", 2: "input error", 3: "UNKNOWN", 4: "internal error"}

# classes of disagreement; "ok" and "unclear" are not disagreements
DISAGREEMENTS = ["wrong_equivalent", "false_alarm", "crash", "refuted_numeric_agrees",
                 "input_error", "unknown", "timeout", "mode_mismatch"]


class _NumericTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _NumericTimeout()


def numeric_truth(folder, seeds=(0, 1)):
    """'agree', 'disagree', 'unclear' or 'error: ...' (the generator wrote an invalid case)."""
    worst = 0.0
    for s in seeds:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(NUMERIC_TIMEOUT)
        try:
            res = numeric.check(os.path.join(folder, "spec.onnx"), os.path.join(folder, "shards"), s,
                                abs_floor=ABS_FLOOR)
        except _NumericTimeout:
            return "unclear"
        except (numeric.InputError, ValueError, KeyError, IndexError) as e:
            return "error: %s" % e
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        for e in res["errors"].values():
            if e != e or e >= DISAGREE_TOL:
                return "disagree"
            worst = max(worst, e)
    return "agree" if worst <= AGREE_TOL else "unclear"


def prover(binary, folder, reduce=True, timeout=TIMEOUT):
    """Exit code of `onnx-tv check`, 'timeout', or 'signal N'."""
    cmd = [binary, "check", os.path.join(folder, "spec.onnx"), os.path.join(folder, "shards")]
    if not reduce:
        cmd.append("--no-reduce")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if p.returncode < 0:
        return "signal %s" % signal.Signals(-p.returncode).name
    return p.returncode


def classify(num, red, full):
    """The class of one case from the numeric truth and the two verdicts."""
    if num.startswith("error"):
        return "gen_error"
    codes = (red, full)
    if any(c == 4 or str(c).startswith("signal") for c in codes):
        return "crash"
    if (0 in codes and num == "disagree") or (red == 0 and full == 1):
        return "wrong_equivalent"
    if red == 1 and full == 0 and num != "disagree":
        return "false_alarm"
    if 1 in codes and num == "agree" and 0 not in codes:
        return "refuted_numeric_agrees"
    if 2 in codes:
        return "input_error"
    if "timeout" in codes:
        return "timeout"
    if 3 in codes:
        return "unknown"
    if red != full:
        return "mode_mismatch"
    if num == "unclear":
        return "unclear"
    return "ok"


def expected_verdict(num):
    return {"agree": "EQUIVALENT", "disagree": "NOT EQUIVALENT"}.get(num)


SELECTIONS = {"TopK", "ArgMax", "ArgMin"}


def draws(folder):
    """Random draws the float64 run makes: two, or sixteen where integer inputs (token ids)
    take few values or a TopK routes each token to a few experts, so a bug at one id or one
    expert is likely drawn."""
    spec = onnx.load(os.path.join(folder, "spec.onnx"))
    routed = any(n.op_type in SELECTIONS for n in spec.graph.node)
    return tuple(range(16 if routed or numeric.integer_input_ranges(spec) else 2))


def run_case(binary, folder):
    num = numeric_truth(folder, draws(folder))
    if num.startswith("error"):
        return dict(cls="gen_error", num=num, red=None, full=None)
    red = prover(binary, folder, True)
    full = prover(binary, folder, False)
    return dict(cls=classify(num, red, full), num=num, red=red, full=full)
