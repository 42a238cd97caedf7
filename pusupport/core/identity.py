"""A run's identity: what its numbers depend on, and nothing else.

Its settings (less :data:`NOT_RESULTS`), each seed's data (:func:`data_identity`), the code
that trains (:func:`code_version`) and the device choices that change arithmetic
(:meth:`~pusupport.core.runtime.Runtime.numbers`). The run store, checkpoints and committed
parts all key runs by these. The code is hashed by meaning: its syntax tree, without
comments, docstrings, error messages or a method's presentation (label, colour, prose,
sources: the :class:`~pusupport.core.methods.Method` fields marked ``shown``), so that
rewording, recolouring or reformatting keeps every stored run, and editing a risk does not.
A run's code is its method's: a module of :data:`BASELINES` that no run of it executes
is left out, so editing one baseline retrains that baseline's runs only.
"""
from __future__ import annotations

import ast
import hashlib
import subprocess
import weakref
from dataclasses import fields
from functools import lru_cache
from pathlib import Path

#: Settings that change where a run goes or how it is shown, never its numbers: the one
#: list of them (the run store, checkpoints and a page's settings fingerprint leave them out).
NOT_RESULTS = ("progress", "checkpoint_dir", "checkpoint_every", "device")
#: The package's code that trains: these folders' modules, less :data:`NOT_TRAINING`. The data
#: loaders (``pusupport/data``) are not: what they give a run enters its key through the
#: data's checksum (:func:`data_identity`), so a fix to a loader retrains only the runs whose
#: data it moves.
TRAINING_CODE = ("core",)
#: Modules there that store, show, place or identify a run, or size it for the cost model
#: (their choices that change numbers enter the key apart: :meth:`Runtime.numbers`), and a
#: page's own settings (what it varies or shows, beyond single runs).
NOT_TRAINING = ("core/atomic.py", "core/checkpoint.py", "core/identity.py", "core/page_settings.py",
                "core/progress.py", "core/runtime.py")
PACKAGE = Path(__file__).parents[1]


def _sources(ref: str | None) -> list[tuple[str, bytes]]:
    """(path under the package, text) of every module of :data:`TRAINING_CODE`, in this
    checkout or at the git commit ``ref``."""
    if ref is None:
        found = [(p.relative_to(PACKAGE).as_posix(), p.read_bytes())
                 for folder in TRAINING_CODE for p in (PACKAGE / folder).rglob("*.py")]
    else:
        git = ["git", "-C", str(PACKAGE.parent)]
        listed = subprocess.run([*git, "ls-tree", "-r", "--name-only", ref, "--",
                                 *(f"{PACKAGE.name}/{f}" for f in TRAINING_CODE)],
                                capture_output=True, text=True, check=True).stdout.split()
        found = [(name.split("/", 1)[1], subprocess.run([*git, "show", f"{ref}:{name}"],
                                                        capture_output=True, check=True).stdout)
                 for name in listed if name.endswith(".py")]
    return [(name, text) for name, text in found if name not in NOT_TRAINING]


@lru_cache(maxsize=1)
def _shown() -> tuple[frozenset, frozenset]:
    """The positions and names of :class:`Method`'s presentation fields."""
    from .methods import Method
    names = [f.name for f in fields(Method)]
    shown = {f.name for f in fields(Method) if f.metadata.get("shown")}
    return frozenset(i for i, n in enumerate(names) if n in shown), frozenset(shown)


#: Calls that only show (printed words, a progress bar's postfix), and the calls their
#: arguments may make and still leave them without an effect on a number.
SHOWS = ("print", "set_postfix", "set_description")
PURE = ("len", "str", "int", "float", "round", "format", "dict", "min", "max", "abs", "isnan")


def _called(call) -> str | None:
    """The name a call calls: ``f`` of ``f(…)`` and of ``module.f(…)``."""
    return getattr(call.func, "id", getattr(call.func, "attr", None))


def _is_text(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


class _Meaning(ast.NodeTransformer):
    """A module's tree less what cannot change a number."""

    def _body(self, node):
        self.generic_visit(node)
        if node.body and isinstance(node.body[0], ast.Expr) and _is_text(node.body[0].value):
            node.body = node.body[1:] or [ast.Pass()]
        return node

    visit_Module = visit_ClassDef = visit_FunctionDef = visit_AsyncFunctionDef = _body

    def visit_Raise(self, node):            # an error's words, not its type
        for part in ast.walk(node):
            if isinstance(part, ast.Call):
                part.args = [a for a in part.args if not (_is_text(a) or isinstance(a, ast.JoinedStr))]
        return node

    def visit_AnnAssign(self, node):        # a presentation field's declaration
        value = node.value
        if (isinstance(value, ast.Call) and getattr(value.func, "id", None) == "field"
                and any(k.arg == "metadata" and getattr(k.value, "id", None) == "SHOWN"
                        for k in value.keywords)):
            return None
        return node

    def visit_Expr(self, node):             # a line that only shows: printed, or a bar's postfix
        call = node.value
        if (isinstance(call, ast.Call) and _called(call) in SHOWS
                and all(_called(c) in PURE for c in ast.walk(call) if c is not call
                        and isinstance(c, ast.Call))):
            return None
        return self.generic_visit(node)

    def visit_Call(self, node):             # a method's presentation, a progress bar's display
        self.generic_visit(node)
        called = _called(node)
        if called == "Method":
            at, names = _shown()
            node.args = [ast.Constant(None) if i in at else a for i, a in enumerate(node.args)]
            node.keywords = [k for k in node.keywords if k.arg not in names]
        elif called == "progress":
            node.keywords = []
        return node


def _canonical(node) -> str:
    """The tree as text, the same on every Python version (no positions, no empty fields)."""
    if isinstance(node, ast.AST):
        parts = (f"{k}={_canonical(v)}" for k, v in ast.iter_fields(node) if v is not None and v != [])
        return f"{type(node).__name__}({','.join(parts)})"
    if isinstance(node, list):
        return f"[{','.join(map(_canonical, node))}]"
    return repr(node)


@lru_cache(maxsize=1024)
def meaning(text: bytes | str) -> str:
    """The part of a module's source that can change a number, as canonical text (kept by
    text: a run store keys every run by it)."""
    return _canonical(_Meaning().visit(ast.parse(text)))


#: Where the methods people use today live: a module there shapes only the runs that use it.
BASELINES = "core/baselines/"


def _registered(sources) -> dict[str, str]:
    """{method name: the module of :data:`BASELINES` that registers it}, read from the
    ``register(Method("name", …))`` calls in the source text."""
    return {method: name for name, text in sources if name.startswith(BASELINES)
            for method in _registers(text)}


@lru_cache(maxsize=None)
def _registers(text) -> tuple[str, ...]:
    """The method names a module's text registers: parsed once per text, as every run's key
    asks (the standing page keys 96 runs)."""
    return tuple(node.args[0].args[0].value for node in ast.walk(ast.parse(text))
                 if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register"
                 and node.args and isinstance(node.args[0], ast.Call) and node.args[0].args
                 and _is_text(node.args[0].args[0]))


@lru_cache(maxsize=None)
def _imported(text) -> frozenset[str]:
    """The modules of :data:`BASELINES` that a module there imports (``from .x import``)."""
    return frozenset(f"{BASELINES}{node.module}.py" for node in ast.walk(ast.parse(text))
                     if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module)


def _used_by(methods, sources) -> set[str]:
    """The modules of :data:`BASELINES` a run of each of ``methods`` executes: the one that
    registers it, those that register the methods it trains as before its first selection
    and those that score it at another threshold (its views), and what they import."""
    from .methods import METHODS, views_of
    names = set()
    for m in methods:
        method = METHODS[m]
        names |= {m, *(v.name for v in views_of(m)), *filter(None, [method.before_selection, method.view_of])}
    registered, texts = _registered(sources), dict(sources)
    todo = {registered[n] for n in names if n in registered}
    used = set()
    while todo:
        module = todo.pop()
        used.add(module)
        todo |= _imported(texts[module]) - used
    return used


def code_version(ref: str | None = None, methods=None) -> str:
    """A hash of the meaning (:func:`meaning`) of the code that trains, in this checkout or
    at the git commit ``ref``: a stored run, checkpoint or committed part from other
    training code is not reused; one from a reworded docstring, a colour or a page is.
    ``methods``: the code that trains runs of these methods only — every module but those of
    :data:`BASELINES` that no run of theirs executes (:func:`_used_by`), so that editing
    one baseline keeps every other method's runs."""
    sources = _sources(ref)
    if methods is not None:
        used = _used_by(methods, sources)
        sources = [(name, text) for name, text in sources
                   if not name.startswith(BASELINES) or name == f"{BASELINES}__init__.py" or name in used]
    digest = hashlib.sha256()
    for name, text in sorted(sources):
        digest.update(name.encode() + b"\0" + meaning(text).encode() + b"\0")
    return digest.hexdigest()[:16]


#: Checksums already computed: {ids of the parts: (each part's weak reference and version, sum)}.
_SUMS: dict = {}


def checksum(*tensors) -> str:
    """A short sha256 of tensors' dtypes, shapes and bytes (sparse rows: all their parts).
    Computed once while the same tensors live unmodified (their version counters; a tensor
    without one, made in inference mode, every time): a store keys every run by its data."""
    parts = [p for t in tensors for p in ((t.crow, t.col, t.val) if hasattr(t, "crow") else (t,))]
    versions = [None if p.is_inference() else p._version for p in parts]
    key = tuple(map(id, parts))
    kept = _SUMS.get(key)
    if kept and None not in versions and all(ref() is p and v == version for (ref, v), p, version
                                              in zip(kept[0], parts, versions)):
        return kept[1]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str((part.dtype, tuple(part.shape))).encode())
        digest.update(part.detach().contiguous().cpu().numpy().tobytes())
    found = digest.hexdigest()[:16]
    if None not in versions:
        forget = lambda _, key=key: _SUMS.pop(key, None)     # noqa: E731 (a part died)
        _SUMS[key] = ([(weakref.ref(p, forget), v) for p, v in zip(parts, versions)], found)
    return found


def data_identity(data) -> dict:
    """What identifies one seed's PU data: its name, π and a checksum of every tensor (the
    validation split's where one is held out)."""
    held = [] if data.x_val_p is None else [data.x_val_p, data.x_val_u]
    return {"name": data.name, "prior": float(data.prior),
            "tensors": checksum(data.x_p, data.x_u, data.u_truth, data.u_in_p, data.x_test,
                                 data.y_test, *held)}
