"""The verdict of onnx_tv.check as a Python object (docs/python.md)."""
import dataclasses
import json
from typing import Optional


@dataclasses.dataclass(frozen=True)
class Location:
    """The first diverging operator on one side: `side` is "spec" or "plan", `rank` is None
    for the spec, `node` is the exporter's name of the node, `output` the tensor it produced
    that diverges."""

    side: str
    file: str
    rank: Optional[int]
    node: str
    op_type: str
    output: str


def _location(side, node):
    rank = node["rank"]
    return Location(side, node["file"], None if rank < 0 else rank, node["node"], node["op_type"],
                    node["output"])


class Result:
    """What a check concluded: EQUIVALENT, NOT EQUIVALENT or UNKNOWN.

    Truth testing is refused (TypeError): `if result:` would be true for a NOT EQUIVALENT
    plan too. Ask `result.equivalent`, or compare `result.verdict`."""

    __slots__ = ("verdict", "exit_code", "message", "witness", "locations", "report", "text",
                 "_json")

    def __init__(self, json_text, text, witness):
        report = json.loads(json_text)
        self._json = json_text
        self.report = report                    # the --json report, docs/json-report.md
        self.verdict = report["verdict"]        # "EQUIVALENT", "NOT EQUIVALENT", "UNKNOWN"
        self.exit_code = report["exit_code"]    # the CLI's: 0, 1, 3
        self.message = report.get("message", "")
        self.text = text                        # what the CLI prints on standard output
        # symbol -> exact rational as text ("-3", "1/3"), in the text report's order; every
        # input not named is 0. fractions.Fraction(value) reads a value.
        self.witness = dict(witness)
        mismatch = report.get("mismatch") or {}
        self.locations = [_location(side, mismatch[key])
                          for side, key in (("spec", "spec_node"), ("plan", "rank_node"))
                          if key in mismatch]

    @property
    def equivalent(self):
        """True exactly when the plan is proven equivalent to the spec."""
        return self.verdict == "EQUIVALENT"

    @property
    def seconds(self):
        """How long the check took, as the summary line says."""
        return self.report["stats"]["seconds"]

    def to_json(self):
        """The JSON report, as `onnx-tv check --json FILE` writes it."""
        return self._json

    def __bool__(self):
        raise TypeError("the truth value of an onnx_tv.Result is ambiguous: use "
                        "result.equivalent (or result.verdict)")

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<onnx_tv.Result %s%s>" % (self.verdict, ": " + self.message if self.message else "")
