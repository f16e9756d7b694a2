"""No module uses another module's private names (issue 42).

A name with a leading underscore is its module's own business: `from sidelight.x import _name`,
`x._name` on an imported module or class, and `getattr(obj, "_name")` on anything but `self`/`cls`
are refused outside the module that defines the name (a module that sets `obj._name` itself, as
argparse actions do on their namespace, owns that attribute). A package's `__init__` may use its own
submodules' private names (the package is then the unit: `structures.kernels` jits its submodules'
kernels). Attribute access on other objects (`index._memo` on a parameter) needs types to see and
is left to review.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sidelight

PACKAGE = Path(sidelight.__file__).parent
# Being rewritten by the lane refactor (issue 42); removed from here when it lands.


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module an import statement names (`from ..x import y` inside `module`)."""
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _own(importer: str, is_package: bool, source: str) -> bool:
    """Whether `importer` may use the private names of `source`: its own, or (for a package's
    `__init__`) those of its submodules."""
    return source == importer or (is_package and source.startswith(importer + "."))


def private_uses(root: Path) -> list[str]:
    """Every use of another module's private name under the package folder `root`, as
    "path:line: what" (see the module docstring)."""
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        module, is_package = _module_name(path, root), path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: dict[str, str] = {}  # local name -> the sidelight module it came from
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, is_package, node.level, node.module)
                if not source.startswith("sidelight"):
                    continue
                for alias in node.names:
                    if _private(alias.name) and not _own(module, is_package, source):
                        out.append(f"{rel}:{node.lineno}: from {source} import {alias.name}")
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}" if _is_module(
                        root, f"{source}.{alias.name}") else source
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("sidelight"):
                        bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else "sidelight"
        owned = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in bound and not _own(module, is_package, bound[node.value.id])):
                out.append(f"{rel}:{node.lineno}: {node.value.id}.{node.attr}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
                  and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                  and _private(node.args[1].value) and node.args[1].value not in owned
                  and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls"))):
                out.append(f"{rel}:{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return out


def _is_module(root: Path, dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file()


def test_no_private_name_is_used_across_modules():
    found = private_uses(PACKAGE)
    assert found == [], "private names used outside their module:\n" + "\n".join(found)


@pytest.mark.parametrize("source, expected", [
    ("from sidelight.structures.lexical import _accumulate\n", ["from sidelight.structures.lexical import _accumulate"]),
    ("from ..structures import lexical\nlexical._accumulate(1)\n", ["lexical._accumulate"]),
    ("from .index import Index\nIndex._load_generation(1)\n", ["Index._load_generation"]),
    ("def f(store):\n    return getattr(store, '_embedder', None)\n", ["getattr(..., '_embedder')"]),
    # not offences: a public name, a private alias of a public module, one's own privates, self
    ("from ..structures import kernels as _kernels\n_kernels.use()\n", []),
    ("_X = 1\ndef f():\n    return _X\n", []),
    ("class A:\n    def f(self):\n        return getattr(self, '_x', None)\n", []),
    ("def f(ns):\n    ns._seen = 1\n    return getattr(ns, '_seen', None)\n", []),
])
def test_the_check_sees_each_kind_of_use(tmp_path, source, expected):
    """The checker against hand-written modules (an oracle: what each line does is plain)."""
    root = tmp_path / "sidelight"
    (root / "index").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "index" / "__init__.py").write_text("")
    (root / "index" / "probe.py").write_text(source)
    got = [u.split(": ", 1)[1] for u in private_uses(root)]
    assert got == expected
