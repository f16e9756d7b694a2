"""Errors that name the problem; the CLI turns them into a message and a non-zero exit."""


class SidelightError(Exception):
    """Base class for every error sidelight raises on purpose."""


class InputError(SidelightError):
    """Malformed input: a bad JSONL line, an unknown id, an empty query."""


class MissingDataError(SidelightError):
    """A data set, Debian package or model package that is not on this machine."""


class IndexFormatError(SidelightError):
    """An index folder that is corrupt, foreign or of another format version."""


class NonFiniteScoreError(SidelightError):
    """A score that is NaN or infinite: rankings fail closed rather than guess."""
