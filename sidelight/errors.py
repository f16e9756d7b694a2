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


class StorageError(SidelightError):
    """A write the disk or the file system refused (full, read-only, no permission): nothing was half-written."""


def describe_os_error(exc: OSError) -> str:
    """One line for an OSError: the file it names, what went wrong, and a hint for the usual causes."""
    import errno

    where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
    what = exc.strerror or str(exc)
    hint = {errno.ENOSPC: "; the disk is full: free some space and run it again (what was there before is intact)",
            errno.EROFS: "; the folder is on a read-only file system",
            errno.EACCES: "; you have no permission to write there",
            errno.EMFILE: "; too many open files (raise ulimit -n)"}.get(exc.errno or 0, "")
    if not hint and "requested and" in str(exc) and "written" in str(exc):  # numpy's short write
        hint = "; a short write: is the disk full? (what was there before is intact)"
    return f"{where}{what}{hint}"
