"""The one error type: a message that names the file and the reason."""


class ReportError(Exception):
    """A fact the module cannot read or a request it cannot do.

    The CLI prints "report: COMMAND: MESSAGE" and exits 2 (usage, missing
    or malformed input); commands that decide a verdict exit 0/1/3 only
    on inputs they could read whole.
    """


def read_text(path):
    """The text of PATH, or ReportError naming it and the reason."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        raise ReportError(f"'{path}': {e.strerror}") from None


def read_optional(path, default=None):
    """The text of PATH with trailing whitespace removed, or DEFAULT when
    it does not exist (files a runner writes only sometimes)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().rstrip()
    except FileNotFoundError:
        return default
    except OSError as e:
        raise ReportError(f"'{path}': {e.strerror}") from None
