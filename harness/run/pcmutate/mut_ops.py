"""The mutation operators: every candidate mutant of one source file.

A candidate is one textual change on one line of a function body: the
span [off, off + len(orig)) of the file's text becomes REPL.  Operators
(each rule is what the code below checks, nothing more):

  ROR    relational: < <= > >= == != each to its neighbours
         (< to <= and >, <= to < and >=, == to != ...)
  AOR    binary arithmetic and shifts: + - swapped, * to /, / to *,
         % to /, << and >> swapped, += and -= swapped.  Unary + - *,
         ++ --, pointer declarators and casts are not binary operators
  OBO    off by one: an integer literal compared with anything, or an
         upper-case macro as the bound of < <= > >= (not of == !=: an
         errno or a tag plus one is another name, not a bound), +1 and -1;
         sizeof(...) used as a size (not a divisor) to sizeof(...) - 1; a
         local array's literal length -1
  SIGN   dropped sign or zero extension: a cast to an integer type
         removed, or its signedness swapped; a shift pair (x << n) >> n
         (the sign-extension idiom) reduced to x.  Casts of a ctype
         function's argument ((unsigned char) in isdigit(...)) are left
         out: glibc's tables answer -128..-1 as 128..255, so the mutant
         is equivalent by construction
  ERR    dropped error check: an `if` whose body returns or jumps
         (`return ...;`, `goto ...;`, or a block holding one) gets
         `, 0` before its closing parenthesis: the condition is still
         evaluated (its calls and assignments happen) but never taken;
         and a `goto` in such a block that does more is removed
  SWAP   the first two arguments of a call swapped, when both are plain
         (a name, &name, a member) and of one type as far as the file's
         declarations tell (declared_types; two members of one field
         name count as one type); a *cmp call only where its order
         matters (returned as it is, or compared with < or >)
  CLEAN  a cleanup call statement (free, close, fclose, closedir, munmap,
         elf_end, *_free, *__free, *_close, *__destroy, *_destroy,
         *_release, bpf_ringbuf_discard) replaced by (void)0
"""

import re
from dataclasses import dataclass

from mut_lex import structure, tokenize

OPERATORS = ("ROR", "AOR", "OBO", "SIGN", "ERR", "SWAP", "CLEAN")

KEYWORDS = {"return", "case", "sizeof", "if", "while", "for", "switch", "do", "else", "goto",
            "typeof", "__typeof__", "default", "break", "continue", "_Alignof", "alignof"}
TYPE_WORDS = {"int", "char", "short", "long", "unsigned", "signed", "void", "const", "volatile",
              "struct", "union", "enum", "float", "double", "_Bool", "bool", "static", "extern",
              "register", "inline", "restrict", "__restrict"}
_TYPE_NAME = re.compile(r"^(__[us](8|16|32|64)|[us](8|16|32|64)|\w+_t|FILE|DIR|Elf\w*|GElf_\w+|va_list)$")
_MACRO = re.compile(r"^[A-Z][A-Z0-9_]*$")
_CTYPE = re.compile(r"^(is(alnum|alpha|digit|xdigit|space|upper|lower|print|punct|graph|cntrl|blank)|to(upper|lower))$")
_CLEANUP = re.compile(r"^(free|close|fclose|closedir|munmap|elf_end|pclose)$|"
                      r"(_free|__free|_close|__destroy|_destroy|_release|_discard)$")

# Integer cast types and their signedness twin (None: only dropped).
INT_CASTS = {
    "int8_t": "uint8_t", "uint8_t": "int8_t", "int16_t": "uint16_t", "uint16_t": "int16_t",
    "int32_t": "uint32_t", "uint32_t": "int32_t", "int64_t": "uint64_t", "uint64_t": "int64_t",
    "__s8": "__u8", "__u8": "__s8", "__s16": "__u16", "__u16": "__s16", "__s32": "__u32",
    "__u32": "__s32", "__s64": "__u64", "__u64": "__s64",
    "int": "unsigned int", "unsigned": "int", "unsigned int": "int", "char": "unsigned char",
    "unsigned char": "signed char", "signed char": "unsigned char", "short": "unsigned short",
    "unsigned short": "short", "long": "unsigned long", "unsigned long": "long",
    "size_t": "ssize_t", "ssize_t": "size_t", "pid_t": None, "off_t": None,
}

ROR = {"<": ("<=", ">"), "<=": ("<", ">="), ">": (">=", "<"), ">=": (">", "<="),
       "==": ("!=",), "!=": ("==",)}
AOR = {"+": "-", "-": "+", "*": "/", "/": "*", "%": "/", "<<": ">>", ">>": "<<",
       "+=": "-=", "-=": "+="}


@dataclass
class Cand:
    file: str
    func: str
    op: str
    off: int        # of the change in the file's text
    line: int
    col: int
    orig: str       # the replaced text
    repl: str       # its replacement
    before: str     # the whole line, stripped, as it is
    after: str      # and as the mutant has it
    id: str = ""


def c_int(text):
    """(value, formatter) of a C integer literal: the formatter writes a
    value back in the literal's base, with its suffix."""
    m = re.match(r"^(0[xX][0-9a-fA-F]+|0[0-7]+|\d+)([uUlL]*)$", text)
    digits, suffix = m.group(1), m.group(2)
    if digits[:2].lower() == "0x":
        return int(digits, 16), lambda v: hex(v) + suffix
    if len(digits) > 1 and digits[0] == "0":
        return int(digits, 8), lambda v: "0" + format(v, "o") + suffix
    return int(digits), lambda v: str(v) + suffix


def _is_type_tok(toks, i):
    t = toks[i]
    if t.kind != "ident":
        return t.text == "*"
    return (t.text in TYPE_WORDS or bool(_TYPE_NAME.match(t.text))
            or (i > 0 and toks[i - 1].text in ("struct", "union", "enum")))


def _is_cast_close(toks, i):
    """Does the ')' at I close a cast (a parenthesized type name)?"""
    o = toks[i].match
    if o < 0 or o + 1 >= i:
        return False
    if o > 0 and (toks[o - 1].kind == "ident" or toks[o - 1].text in (")", "]")):
        return False        # a call's or sizeof's parentheses, or (f)(x)
    return all(_is_type_tok(toks, k) for k in range(o + 1, i))


def _value_before(toks, i):
    """Is the token before I the end of an operand (so I is binary)?"""
    if i == 0:
        return False
    p = toks[i - 1]
    if p.kind in ("num", "str", "chr"):
        return True
    if p.kind == "ident":
        return p.text not in KEYWORDS and p.text not in TYPE_WORDS
    if p.text == ")":
        o = toks[i - 1].match
        if o > 0 and toks[o - 1].text in ("if", "while", "for", "switch"):
            return False        # `if (x) *p = 0;`: a statement starts
        return not _is_cast_close(toks, i - 1)
    return p.text == "]"


def _binary_star(toks, i):
    """'*' as multiplication, not a declarator or a dereference."""
    if not _value_before(toks, i) or i + 1 >= len(toks):
        return False
    p, n = toks[i - 1], toks[i + 1]
    if n.text in (")", ",", ";", "=", "*", "const", "["):
        return False
    if p.kind == "ident" and _is_type_tok(toks, i - 1):
        return False
    # `name *x` at a statement's start declares x.
    if p.kind == "ident" and i >= 2 and toks[i - 2].text in (";", "{", "}", "(", ","):
        return n.kind == "num"
    return True


_QUALIFIERS = {"const", "volatile", "static", "register", "extern", "inline", "restrict", "__restrict"}


def _type_start(toks, k):
    t = toks[k]
    return t.kind == "ident" and (t.text in TYPE_WORDS or bool(_TYPE_NAME.match(t.text)))


def declared_types(toks, a, b):
    """{name: type} of the parameters and locals declared in tokens
    [A, B): `unsigned long x, *p` gives x "unsigned long", p "unsigned
    long *"; an array counts as a pointer.  Good enough to tell whether
    two arguments share a type; a name it cannot read is left out."""
    out, k = {}, a
    while k < b:
        if not _type_start(toks, k) or (k > a and toks[k - 1].text in (".", "->")):
            k += 1
            continue
        base = []
        while k < b and (_type_start(toks, k) or toks[k].text in _QUALIFIERS):
            if toks[k].text in ("struct", "union", "enum") and k + 1 < b:
                base.append(toks[k].text + " " + toks[k + 1].text)
                k += 2
                continue
            if toks[k].text not in _QUALIFIERS:
                base.append(toks[k].text)
            k += 1
        while k < b:                            # declarators
            stars = 0
            while k < b and toks[k].text in ("*", "const"):
                stars += toks[k].text == "*"
                k += 1
            if k >= b or toks[k].kind != "ident" or toks[k].text in TYPE_WORDS:
                break
            name, k = toks[k].text, k + 1
            if k < b and toks[k].text == "[":
                stars += 1
            if k < b and toks[k].text not in (",", ";", "=", ")", "["):
                break                           # not a declaration after all
            out[name] = " ".join(base) + " " + "*" * stars
            while k < b and toks[k].text not in (",", ";", ")"):
                k = toks[k].match + 1 if toks[k].text in ("(", "[", "{") else k + 1
            if k + 1 < b and toks[k].text == "," and not _type_start(toks, k + 1):
                k += 1
                continue
            break
    return out


class Gen:
    """Candidates of one file: FILE (its path as reported), TEXT."""

    def __init__(self, file, text):
        self.file, self.text = file, text
        self.toks, funcs = structure(tokenize(text))
        self.types = {}         # function name: {variable: its type}
        for name, params, body in funcs:
            self.types[name] = declared_types(self.toks, params, self.toks[body].match)
        self.out = []

    def add(self, op, i, orig_end, repl, start_tok=None):
        """Replace the text from token START_TOK (default I) to the end of
        token ORIG_END by REPL; only on one line, inside a function."""
        s, e = self.toks[i if start_tok is None else start_tok], self.toks[orig_end]
        if s.func is None or s.line != e.line:
            return
        a, b = s.off, e.off + len(e.text)
        orig = self.text[a:b]
        if orig == repl:
            return
        bol = a - (s.col - 1)
        eol = self.text.find("\n", a)
        eol = len(self.text) if eol < 0 else eol
        line = self.text[bol:eol]
        after = line[:a - bol] + repl + line[b - bol:]
        self.out.append(Cand(self.file, s.func, op, a, s.line, s.col, orig, repl,
                             line.strip(), after.strip()))

    def run(self):
        for i, t in enumerate(self.toks):
            if t.func is None:
                continue
            if t.kind == "punct":
                self.ror(i, t)
                self.aor(i, t)
                self.obo_compare(i, t)
                self.sign(i, t)
            elif t.kind == "ident":
                self.obo_sizeof(i, t)
                self.obo_array(i, t)
                self.err(i, t)
                self.swap(i, t)
                self.clean(i, t)
        return self.out

    # ---- ROR, AOR --------------------------------------------------------
    def ror(self, i, t):
        for r in ROR.get(t.text, ()):
            self.add("ROR", i, i, r)

    def aor(self, i, t):
        r = AOR.get(t.text)
        if r is None:
            return
        if t.text in ("+", "-") and not _value_before(self.toks, i):
            return
        if t.text == "*" and not _binary_star(self.toks, i):
            return
        self.add("AOR", i, i, r)

    # ---- OBO -------------------------------------------------------------
    def obo_compare(self, i, t):
        if t.text not in ROR:
            return
        for k in (i - 1, i + 1):
            if 0 <= k < len(self.toks):
                self._obo_operand(k, i)

    def _obo_operand(self, k, op_i):
        c = self.toks[k]
        nxt = self.toks[k + 1] if k + 1 < len(self.toks) else None
        prv = self.toks[k - 1] if k > 0 else None
        # The whole operand must be this one token: `x < 8`, not `x < 8 * y`.
        side_ok = ((k < op_i and (prv is None or prv.text in ("(", "&&", "||", ",", "?", "return", "!")))
                   or (k > op_i and nxt is not None and nxt.text in (")", "&&", "||", ";", "?", ",", ":")))
        if not side_ok:
            return
        if c.kind == "num":
            v, fmt = c_int(c.text)
            # Not the same program twice: on integers `x < k+1` is the ROR
            # mutant `x <= k`, `x >= k+1` is `x > k`, `x <= k-1` is `x < k`,
            # `x > k-1` is `x >= k` (mirrored for `k OP x`).
            op = self.toks[op_i].text
            if k < op_i:
                op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
            if op not in ("<", ">="):
                self.add("OBO", k, k, fmt(v + 1))
            if v > 0 and op not in ("<=", ">"):
                self.add("OBO", k, k, fmt(v - 1))
        elif (c.kind == "ident" and _MACRO.match(c.text) and (nxt is None or nxt.text != "(")
              and self.toks[op_i].text not in ("==", "!=")):
            self.add("OBO", k, k, f"({c.text} + 1)")
            self.add("OBO", k, k, f"({c.text} - 1)")

    def obo_sizeof(self, i, t):
        if t.text != "sizeof" or i + 1 >= len(self.toks) or self.toks[i + 1].text != "(":
            return
        if i > 0 and self.toks[i - 1].text in ("/", "*", "%"):
            return      # a divisor: the count of elements, not a size
        end = self.toks[i + 1].match
        self.add("OBO", i, end, "(" + self.text[t.off:self.toks[end].off + 1] + " - 1)")

    def obo_array(self, i, t):
        """`type name[N]` declaring a local array: N - 1."""
        ts = self.toks
        if i + 3 >= len(ts) or ts[i + 1].text != "[" or ts[i + 2].kind != "num" or ts[i + 3].text != "]":
            return
        if i == 0 or not _is_type_tok(ts, i - 1):
            return
        v, fmt = c_int(ts[i + 2].text)
        if v > 1:
            self.add("OBO", i + 2, i + 2, fmt(v - 1))

    # ---- SIGN ------------------------------------------------------------
    def sign(self, i, t):
        ts = self.toks
        if t.text == "(" and t.match > i + 1:
            self._sign_cast(i)
        if t.text == ">>" and i + 1 < len(ts) and ts[i - 1].text == ")":
            self._sign_shift_pair(i)

    def _sign_cast(self, i):
        ts, close = self.toks, self.toks[i].match
        if not _is_cast_close(ts, close):
            return
        name = " ".join(ts[k].text for k in range(i + 1, close))
        if name not in INT_CASTS:
            return
        if i >= 2 and ts[i - 1].text == "(" and _CTYPE.match(ts[i - 2].text or ""):
            return
        self.add("SIGN", i, close, "")
        if INT_CASTS[name]:
            self.add("SIGN", i, close, f"({INT_CASTS[name]})")

    def _sign_shift_pair(self, i):
        """( ... X << N ... ) >> N  ->  ( ... X ... )"""
        ts = self.toks
        n, o = ts[i + 1], ts[i - 1].match
        for k in range(o + 1, i - 1):
            if ts[k].text == "<<" and ts[k + 1].text == n.text and ts[k + 1].kind in ("ident", "num"):
                a = ts[o].off
                inner = self.text[a:ts[k].off].rstrip() + self.text[ts[k + 1].off + len(n.text):ts[i - 1].off + 1]
                self.add("SIGN", o, i + 1, inner)
                return

    # ---- ERR -------------------------------------------------------------
    def _exit_body(self, b):
        """Does the statement starting at token B return or jump?"""
        ts = self.toks
        if ts[b].text in ("return", "goto"):
            return True
        if ts[b].text != "{":
            return False
        end, k = ts[b].match, b + 1
        while k < end:
            if ts[k].text in ("return", "goto") and ts[k - 1].text in ("{", ";", "}"):
                return True
            k = ts[k].match + 1 if ts[k].text in ("(", "[", "{") else k + 1
        return False

    def err(self, i, t):
        ts = self.toks
        if t.text != "if" or i + 1 >= len(ts) or ts[i + 1].text != "(":
            return
        close = ts[i + 1].match
        if not self._exit_body(close + 1):
            return
        self.add("ERR", close, close, ", 0)")
        if ts[close + 1].text == "{":
            self._err_gotos(close + 1)

    def _err_gotos(self, b):
        ts = self.toks
        end = ts[b].match
        stmts = sum(1 for k in range(b + 1, end) if ts[k].text == ";")
        if stmts < 2:
            return
        for k in range(b + 1, end - 2):
            if ts[k].text == "goto" and ts[k + 2].text == ";":
                self.add("ERR", k, k + 2, ";")

    # ---- SWAP ------------------------------------------------------------
    def _args(self, o):
        """[(first, last)] token ranges of the arguments in the call
        whose '(' is at O."""
        ts, close = self.toks, self.toks[o].match
        out, s, k = [], o + 1, o + 1
        while k < close:
            if ts[k].text == ",":
                out.append((s, k - 1))
                s = k + 1
            k = ts[k].match + 1 if ts[k].text in ("(", "[", "{") else k + 1
        if s < close:
            out.append((s, close - 1))
        return out

    def _arg_type(self, a, b, func):
        """The type of argument tokens [A, B] when it is plain enough to
        tell: a declared name, &name, or a member (named by its field:
        two members of one name share a type); else None."""
        ts = self.toks
        amp = ts[a].text == "&"
        k = a + 1 if amp else a
        if ts[k].kind != "ident":
            return None
        t = self.types.get(func, {}).get(ts[k].text)
        while k < b:        # name (. -> member | [ simple ])*
            if ts[k + 1].text in (".", "->") and k + 2 <= b and ts[k + 2].kind == "ident":
                k += 2
                t = "member " + ts[k].text
            elif ts[k + 1].text == "[" and ts[k + 1].match <= b and ts[k + 1].match == k + 3:
                k += 3
                t = t[:-1] if t and t.endswith("*") else None
            else:
                return None
        if t is None:
            return None
        return t + ("&" if amp else "")

    def swap(self, i, t):
        ts = self.toks
        if (i + 1 >= len(ts) or ts[i + 1].text != "(" or t.text in KEYWORDS or _MACRO.match(t.text)
                or t.text.startswith("__") or (i > 0 and _is_type_tok(ts, i - 1))):
            return
        args = self._args(i + 1)
        if len(args) < 2:
            return
        (a1, b1), (a2, b2) = args[0], args[1]
        k1, k2 = self._arg_type(a1, b1, t.func), self._arg_type(a2, b2, t.func)
        if k1 is None or k1 != k2:
            return
        x = self.text[ts[a1].off:ts[b1].off + len(ts[b1].text)]
        y = self.text[ts[a2].off:ts[b2].off + len(ts[b2].text)]
        if x == y:
            return
        if t.text.endswith("cmp") or t.text.endswith("casecmp"):
            after = ts[ts[i + 1].match + 1].text
            if not ((i > 0 and ts[i - 1].text == "return" and after == ";")
                    or after in ("<", ">", "<=", ">=")):
                return
        if ts[a1].line != ts[b2].line:
            return
        mid = self.text[ts[b1].off + len(ts[b1].text):ts[a2].off]
        self.add("SWAP", a1, b2, y + mid + x, start_tok=a1)

    # ---- CLEAN -----------------------------------------------------------
    def clean(self, i, t):
        ts = self.toks
        if (not _CLEANUP.search(t.text) or i + 1 >= len(ts) or ts[i + 1].text != "("
                or i == 0 or ts[i - 1].text not in (";", "{", "}", ")", "else", ":")):
            return
        close = ts[i + 1].match
        if close + 1 < len(ts) and ts[close + 1].text == ";":
            if ts[i - 1].text == ")" and ts[ts[i - 1].match - 1].text not in ("if", "for", "while"):
                return
            self.add("CLEAN", i, close, "(void)0")


def candidates(file, text):
    """Every candidate of FILE (the path reported) whose text is TEXT."""
    return Gen(file, text).run()
