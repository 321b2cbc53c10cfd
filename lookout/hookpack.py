"""The recording hook path's modules, precompiled into one file (issue 23).

Each import is a search, a stat, an open, a read and an unmarshal (~0.08 ms here): the eight
modules below were a third of what a hook costs over a bare interpreter. `write()` (install,
after byte-compiling the runtime) puts their code objects in one file next to their .pyc files;
a hook shim calls `load()` first, which runs them under their own names, so the imports that
follow find them loaded. The pack is used only when it was made by this very interpreter from
sources of exactly the recorded mtimes and sizes (the rule importlib applies to a .pyc);
anything else, and any failure, leaves the normal imports to do the work. It is trusted as the
.pyc files beside it are: same directory, same writer.

Hook side: `posix`, `sys` and the built-in `marshal` only. Build side (`write`) below."""

# No `from __future__ import annotations` here: it would import __future__ the normal way before
# the pack could provide it (the annotations below are valid as they are).
import marshal
import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

# The hook path (tests/test_layout.py pins it), in an order where each module's imports come
# before it. Flat modules of lookout/ only.
MODULES = ("words", "_jsonfast", "events", "paths", "procs", "machine", "store", "runner")
# The pure-Python standard modules they import (every module's `from __future__ import
# annotations`), packed too when their source is there: an import of one is a search of the
# standard library's directory.
STDLIB = ("__future__",)
# Bumped when the pack's layout changes: an older pack is then not read at all.
FORMAT = 2


def pack_path(package_dir: str) -> str:
    return f"{package_dir}/__pycache__/hookpack.{sys.implementation.cache_tag}.bin"


def _current(here: str) -> "tuple[tuple[str, str, int, int, CodeType], ...] | None":
    """The pack's entries when it is current for these sources and this interpreter."""
    try:
        with open(pack_path(here), "rb") as fh:
            fmt, version, entries = marshal.loads(fh.read())  # noqa: S302 (as trusted as a .pyc)
        if fmt != FORMAT or version != sys.hexversion:
            return None
        for _name, path, mtime_ns, size, _code in entries:
            st = posix.stat(path)
            if st.st_mtime_ns != mtime_ns or st.st_size != size:
                return None  # edited since: its .pyc (or the source) is the truth
    except Exception:  # missing, torn, foreign
        return None
    return entries  # type: ignore[no-any-return]


def is_current(package_dir: str) -> bool:
    """Whether hooks of this package, run by this interpreter, would load from the pack."""
    return _current(package_dir) is not None


def load() -> bool:
    """Run the hook path's modules from the pack. False when it is missing, stale, from another
    interpreter or unreadable (the normal imports then load them): nothing is left registered."""
    here = __file__.rpartition("/")[0]
    package = sys.modules["lookout"]
    if any(f"lookout.{name}" in sys.modules for name in MODULES):
        return False  # never two copies of a module
    entries = _current(here)
    if entries is None:
        return False
    ran: list[str] = []
    try:
        for name, path, _mtime_ns, _size, code in entries:
            if name in sys.modules:
                continue  # a standard module loaded already
            parent, _, leaf = name.rpartition(".")
            module = type(sys)(name)
            module.__file__ = path
            module.__package__ = parent
            sys.modules[name] = module
            ran.append(name)
            exec(code, module.__dict__)  # noqa: S102 (what importlib does with a .pyc's code)
            if parent:
                setattr(package, leaf, module)
    except Exception:
        for name in ran:
            sys.modules.pop(name, None)
            package.__dict__.pop(name.rpartition(".")[2], None)
        return False
    return True


def write(package_dir: str | None = None) -> str:
    """Compile MODULES of package_dir (this package's by default) into its pack, with this
    interpreter, atomically. Returns the pack's path. The hooks must run with this interpreter."""
    import os

    here = package_dir or os.path.dirname(os.path.abspath(__file__))
    import importlib

    sources: list[tuple[str, str]] = []
    for name in STDLIB:
        path = getattr(importlib.import_module(name), "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):  # some systems ship bytecode only
            sources.append((name, path))
    sources += [(f"lookout.{name}", os.path.join(here, f"{name}.py")) for name in MODULES]
    entries = []
    for name, path in sources:
        with open(path, "rb") as fh:
            source = fh.read()
            st = os.fstat(fh.fileno())
        code = compile(source, path, "exec", dont_inherit=True, optimize=0)
        entries.append((name, path, st.st_mtime_ns, st.st_size, code))
    target = pack_path(here)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(marshal.dumps((FORMAT, sys.hexversion, tuple(entries))))
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
