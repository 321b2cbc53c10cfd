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

from __future__ import annotations

import marshal
import posix
import sys

# The hook path (tests/test_layout.py pins it), in an order where each module's imports come
# before it. Flat modules of lookout/ only.
MODULES = ("words", "_jsonfast", "events", "paths", "procs", "machine", "store", "runner")
# Bumped when the pack's layout changes: an older pack is then not read at all.
FORMAT = 1


def pack_path(package_dir: str) -> str:
    return f"{package_dir}/__pycache__/hookpack.{sys.implementation.cache_tag}.bin"


def load() -> bool:
    """Run the hook path's modules from the pack. False when it is missing, stale, from another
    interpreter or unreadable: nothing is left registered then."""
    here = __file__.rpartition("/")[0]
    package = sys.modules["lookout"]
    if any(f"lookout.{name}" in sys.modules for name in MODULES):
        return False  # never two copies of a module
    try:
        with open(pack_path(here), "rb") as fh:
            fmt, version, entries = marshal.loads(fh.read())  # noqa: S302 (as trusted as a .pyc)
        if fmt != FORMAT or version != sys.hexversion:
            return False
        for name, mtime_ns, size, _code in entries:
            st = posix.stat(f"{here}/{name}.py")
            if st.st_mtime_ns != mtime_ns or st.st_size != size:
                return False  # edited since: its .pyc (or the source) is the truth
    except Exception:  # missing, torn, foreign: the normal imports
        return False
    ran: list[str] = []
    try:
        for name, _mtime_ns, _size, code in entries:
            module = type(sys)(f"lookout.{name}")
            module.__file__ = f"{here}/{name}.py"
            module.__package__ = "lookout"
            sys.modules[module.__name__] = module
            ran.append(name)
            exec(code, module.__dict__)  # noqa: S102 (what importlib does with a .pyc's code)
            setattr(package, name, module)
    except Exception:
        for name in ran:
            sys.modules.pop(f"lookout.{name}", None)
            package.__dict__.pop(name, None)
        return False
    return True


def write(package_dir: str | None = None) -> str:
    """Compile MODULES of package_dir (this package's by default) into its pack, with this
    interpreter, atomically. Returns the pack's path. The hooks must run with this interpreter."""
    import os

    here = package_dir or os.path.dirname(os.path.abspath(__file__))
    entries = []
    for name in MODULES:
        path = os.path.join(here, f"{name}.py")
        with open(path, "rb") as fh:
            source = fh.read()
            st = os.fstat(fh.fileno())
        code = compile(source, path, "exec", dont_inherit=True, optimize=0)
        entries.append((name, st.st_mtime_ns, st.st_size, code))
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
