"""C tokens for the mutant generator: what a mutation may touch.

Comments, string and character literals and preprocessor lines (with
their backslash continuations) are never mutated: a change there is either
no code at all, or a macro whose uses we cannot see from its definition.
The tokens keep their offset, line and column; `structure` adds what the
operators ask about: each bracket's partner and the function each token
belongs to (None at file scope: tables and map definitions are not
mutated, only function bodies).
"""

import re
from dataclasses import dataclass

PUNCT = sorted(["...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
                "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##"],
               key=len, reverse=True)

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+|\\\n)
  | (?P<nl>\n)
  | (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<str>"(?:\\.|[^"\\\n])*")
  | (?P<chr>'(?:\\.|[^'\\\n])*')
  | (?P<num>(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*(?![\w.]))
  | (?P<fnum>\.?\d[\w.]*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<punct>""" + "|".join(re.escape(p) for p in PUNCT) + r"""|[^\s])
""", re.S | re.X)

_PP_LINE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)


@dataclass
class Tok:
    kind: str       # ident num str chr punct (fnum: a float or odd number)
    text: str
    off: int        # offset in the file's text
    line: int       # 1-based
    col: int        # 1-based
    func: object = None     # enclosing function's name, None at file scope
    match: int = -1         # index of the partner bracket


def _blank_pp(text):
    """TEXT with every preprocessor line blanked (same length, newlines
    kept): its tokens disappear, every other offset stays."""
    return _PP_LINE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def tokenize(text):
    """The tokens of C source TEXT, comments and preprocessor lines left out."""
    src = _blank_pp(text)
    toks, line, bol = [], 1, 0
    for m in _TOKEN.finditer(src):
        kind, s = m.lastgroup, m.group(0)
        if kind not in ("ws", "nl", "comment"):
            toks.append(Tok(kind, s, m.start(), line, m.start() - bol + 1))
        n = s.count("\n")
        if n:
            line += n
            bol = m.start() + s.rindex("\n") + 1
    return toks


OPEN = {"(": ")", "[": "]", "{": "}"}


def _match_brackets(toks):
    stack = []
    for i, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.text in OPEN:
            stack.append(i)
        elif t.text in (")", "]", "}"):
            if not stack or OPEN[toks[stack[-1]].text] != t.text:
                raise ValueError(f"line {t.line}: unbalanced '{t.text}'")
            j = stack.pop()
            toks[i].match, toks[j].match = j, i
    if stack:
        raise ValueError(f"line {toks[stack[-1]].line}: '{toks[stack[-1]].text}' never closed")


# BPF_PROG(name, args...) defines the function NAME: the macro is the
# libbpf way of writing a tp_btf program.
_NAME_IS_FIRST_ARG = {"BPF_PROG", "BPF_KPROBE", "BPF_KRETPROBE", "BPF_UPROBE", "BPF_URETPROBE"}


def _function_name(toks, close):
    """The name of the function whose parameter list ends at CLOSE, or None."""
    open_ = toks[close].match
    if open_ < 1 or toks[open_ - 1].kind != "ident":
        return None
    name = toks[open_ - 1].text
    if name in _NAME_IS_FIRST_ARG and toks[open_ + 1].kind == "ident":
        return toks[open_ + 1].text
    return name


def structure(toks):
    """Match brackets and mark each token of a function body with its
    function's name (a top-level '{' right after a ')' opens a body).
    Returns the tokens and [(name, parameter list '(', body '{')]."""
    _match_brackets(toks)
    funcs, i = [], 0
    while i < len(toks):
        t = toks[i]
        if t.text == "{" and t.kind == "punct":
            end = t.match
            if i > 0 and toks[i - 1].text == ")":
                name = _function_name(toks, i - 1)
                funcs.append((name, toks[i - 1].match, i))
                for k in range(i + 1, end):
                    toks[k].func = name
            i = end + 1
            continue
        i += 1
    return toks, funcs
