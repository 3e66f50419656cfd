"""The one place new syntax-tree nodes are made.

gast constructors gain fields between releases (``type_params``, ``type_comment``), so
passes never call them directly: they call these helpers, which fill every field a
given gast version has and the caller did not name. Line numbers are copied with
`located`, so an error raised on a generated node still points at the user's line.
"""

from __future__ import annotations

from typing import Any

import gast

_LIST_FIELDS = {"body", "orelse", "targets", "args", "keywords", "elts", "decorator_list",
                "defaults", "kw_defaults", "posonlyargs", "kwonlyargs", "ops",
                "comparators", "values", "type_params", "finalbody", "handlers"}


def make(cls: type, **fields: Any) -> gast.AST:
    """Build a gast node, defaulting every field not given (lists to [], others to None)."""
    for name in cls._fields:
        if name not in fields:
            fields[name] = [] if name in _LIST_FIELDS else None
    return cls(**fields)


def name(id: str, store: bool = False) -> gast.Name:
    return make(gast.Name, id=id, ctx=gast.Store() if store else gast.Load())


def const(value: Any) -> gast.Constant:
    return make(gast.Constant, value=value)


def assign(target: str | gast.AST, value: gast.AST) -> gast.Assign:
    if isinstance(target, str):
        target = name(target, store=True)
    return make(gast.Assign, targets=[target], value=value)


def call(func: str | gast.AST, *args: gast.AST, **keywords: gast.AST) -> gast.Call:
    if isinstance(func, str):
        func = dotted(func)
    kws = [make(gast.keyword, arg=k, value=v) for k, v in keywords.items()]
    return make(gast.Call, func=func, args=list(args), keywords=kws)


def dotted(path: str) -> gast.AST:
    """`np.linalg.norm` as a Name/Attribute chain."""
    head, *rest = path.split(".")
    node: gast.AST = name(head)
    for attr in rest:
        node = make(gast.Attribute, value=node, attr=attr, ctx=gast.Load())
    return node


def binop(left: gast.AST, op: gast.AST, right: gast.AST) -> gast.BinOp:
    return make(gast.BinOp, left=left, op=op, right=right)


def subscript(value: gast.AST, index: gast.AST, store: bool = False) -> gast.Subscript:
    return make(gast.Subscript, value=value, slice=index,
                ctx=gast.Store() if store else gast.Load())


def tuple_(elts: list[gast.AST], store: bool = False) -> gast.Tuple:
    return make(gast.Tuple, elts=list(elts), ctx=gast.Store() if store else gast.Load())


def ret(value: gast.AST) -> gast.Return:
    return make(gast.Return, value=value)


def comment(text: str) -> gast.Expr:
    """A statement that codegen prints as `# text` (the tree has no comment node)."""
    return make(gast.Expr, value=const(COMMENT_MARK + text))


COMMENT_MARK = "__srcgrad_comment__:"


def function(fname: str, params: list[str], body: list[gast.stmt],
             doc: str | None = None) -> gast.FunctionDef:
    args = make(gast.arguments, args=[name(p, store=False) for p in params])
    for a in args.args:
        a.ctx = gast.Param()
    if doc:
        body = [make(gast.Expr, value=const(doc))] + body
    return make(gast.FunctionDef, name=fname, args=args, body=body)


def map_children(node: gast.AST, fn) -> gast.AST:
    """`node`, each child node of it (in a field, or in a list field) replaced by
    `fn(child)`."""
    for field, value in gast.iter_fields(node):
        if isinstance(value, gast.AST):
            setattr(node, field, fn(value))
        elif isinstance(value, list):
            setattr(node, field, [fn(v) if isinstance(v, gast.AST) else v for v in value])
    return node


def located(node: gast.AST, origin: gast.AST | None) -> gast.AST:
    """Give `node` (and its children without a line) the location of `origin`."""
    if origin is None or not hasattr(origin, "lineno"):
        return node
    for child in gast.walk(node):
        if "lineno" in child._attributes and getattr(child, "lineno", None) is None:
            child.lineno = origin.lineno
            child.col_offset = getattr(origin, "col_offset", 0)
    return node
