"""Small formatting helpers shared by the markdown writers."""


def esc(s):
    """Text for a markdown table cell or list item."""
    return str(s).replace("|", "\\|").replace("`", "\\`")


def secs(s):
    """"1m 05s" / "42s" for a number of seconds; "-" when unknown."""
    try:
        f = float(s)
    except (TypeError, ValueError):
        return str(s) if s not in (None, "") else "-"
    n = int(f)
    if n >= 60:
        return f"{n // 60}m {n % 60:02d}s"
    return f"{s}s" if isinstance(s, str) else f"{n}s"


def plural(n, word):
    return f"{n} {word}{'s' * (n != 1)}"


def first_sentence(title):
    """The part of a title before its first colon: short enough for a table."""
    return title.split(":", 1)[0]
