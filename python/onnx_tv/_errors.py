"""The exceptions of onnx_tv.check: a plan that is NOT EQUIVALENT is an answer, not an error;
files that cannot be checked (exit code 2 of the CLI) and bugs in onnx-tv (exit code 4) are."""


class Error(Exception):
    """Base of the exceptions onnx_tv raises for a check that has no verdict."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return self.message


class InputError(Error):
    """The spec or the shards cannot be checked: an unreadable file, a bad binding, an
    unmatched collective, a shape mismatch. str() is the message the CLI prints under INPUT
    ERROR (file, node, value); `report` is the JSON report as a dict, `text` what the CLI
    prints."""

    exit_code = 2

    def __init__(self, message, report=None, text=""):
        super().__init__(message)
        self.report = report if report is not None else {}
        self.text = text


class InternalError(Error):
    """A bug in onnx-tv (the CLI's exit code 4); str() is what the CLI prints. Please report
    it with the files that caused it."""

    exit_code = 4
