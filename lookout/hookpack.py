"""The hook path's modules, precompiled into one file (issue 23).

Each import is a search, a stat, an open, a read and an unmarshal (~0.08 ms here): the eight
modules of a recording hook were a third of what it cost over a bare interpreter. `write()`
(install, after byte-compiling the runtime) puts their code objects next to their .pyc files,
one file per group: `record`, which a hook shim loads first (`boot()`), and `notify`, which the
runner loads only when a transition asks for a notification (`load("notify")`). Loading a group
runs its modules under their own names, so the imports that follow find them loaded.

A group is used only when the pack was made by this very interpreter from sources of exactly
the recorded mtimes and sizes (the rule importlib applies to a .pyc); anything else, and any
failure, leaves the normal imports to do the work. It is trusted as the .pyc files beside it
are: same directory, same writer.

Hook side: `posix`, `sys` and the built-in `marshal` only. Build side (`write`) below."""

# No `from __future__ import annotations` here: it would import __future__ the normal way before
# the pack could provide it (the annotations below are valid as they are).
import marshal
import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

    # module, source path, mtime_ns, size, code (None: an extension module, loaded from its file)
    Entry = tuple[str, str, int, int, CodeType | None]

# Each group in an order where a module's imports come before it (tests/test_hookpack.py checks),
# packages before their modules. `record` is the recording hook path (tests/test_layout.py pins
# it); `notify` is what a transition that asks for a notification adds (notify/handle.py).
GROUPS = {
    "record": ("words", "_jsonfast", "events", "paths", "procs", "machine", "store", "runner"),
    "notify": (
        "errors",
        "config",
        "config.trust",
        "config.cache",
        "templates",
        "notify",
        "notify.rules",
        "notify.handle",
    ),
}
# The pure-Python standard modules the record group imports (every module's `from __future__
# import annotations`), packed with it when their source is there: an import of one is a search
# of the standard library's directory.
STDLIB = ("__future__",)
# The standard extension modules the record group imports (the C JSON scanner, flock), loaded
# from the files the pack names: an import of one searches sys.path first (~0.1 ms each).
EXTENSIONS = ("_json", "fcntl")
# Bumped when the pack's layout changes: an older pack is then not read at all.
FORMAT = 5


def pack_path(package_dir: str, group: str = "record") -> str:
    """A group's file: each is read only by the hooks that need it."""
    return f"{package_dir}/__pycache__/hookpack-{group}.{sys.implementation.cache_tag}.bin"


def _current(here: str, group: str) -> "tuple[Entry, ...] | None":
    """The group's entries when its file is current for their sources and this interpreter."""
    try:
        with open(pack_path(here, group), "rb") as fh:
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
    return all(_current(package_dir, group) is not None for group in GROUPS)


def boot() -> None:
    """What a hook shim runs first: no cyclic garbage collector (a hook lives for milliseconds and
    ends with posix._exit; a collection would only walk what it just loaded: ~0.1-0.2 ms), then
    the record group."""
    import gc  # built in

    gc.disable()
    load()


def load(group: str = "record") -> bool:
    """Run a group's modules from the pack. False when it is missing, stale, from another
    interpreter or unreadable, or when one of them is loaded already (the normal imports then
    load them): nothing is left registered then."""
    here = __file__.rpartition("/")[0]
    if any(f"lookout.{name}" in sys.modules for name in GROUPS.get(group, ())):
        return False  # never two copies of a module
    entries = _current(here, group)
    if entries is None:
        return False
    ran: list[str] = []
    try:
        for name, path, _mtime_ns, _size, code in entries:
            if name in sys.modules:
                continue  # a standard module loaded already
            if code is None:
                _extension(name, path)
                continue
            parent, _, leaf = name.rpartition(".")
            module = type(sys)(name)
            module.__file__ = path
            if path.endswith("/__init__.py"):
                module.__path__ = [path.rpartition("/")[0]]  # a package: its modules are there
                module.__package__ = name
            else:
                module.__package__ = parent
            sys.modules[name] = module
            ran.append(name)
            exec(code, module.__dict__)  # noqa: S102 (what importlib does with a .pyc's code)
            if parent:
                setattr(sys.modules[parent], leaf, module)
    except Exception:
        for name in reversed(ran):
            sys.modules.pop(name, None)
            parent, _, leaf = name.rpartition(".")
            if parent in sys.modules:
                sys.modules[parent].__dict__.pop(leaf, None)
        return False
    return True


def _extension(name: str, path: str) -> None:
    """Load a standard extension module from its file, as importlib's own loader does once its
    search found it (the import system's frozen modules: no import here)."""
    machinery = sys.modules["_frozen_importlib_external"]
    bootstrap = sys.modules["_frozen_importlib"]
    spec = bootstrap.spec_from_loader(name, machinery.ExtensionFileLoader(name, path), origin=path)
    bootstrap._load(spec)


def write(package_dir: str | None = None) -> list[str]:
    """Compile each group of package_dir (this package's by default) into its file, with this
    interpreter, each atomically. Returns their paths. The hooks must run with this
    interpreter."""
    import importlib
    import os

    here = package_dir or os.path.dirname(os.path.abspath(__file__))
    written = []
    for group, modules in GROUPS.items():
        sources: list[tuple[str, str]] = []
        if group == "record":
            for name in STDLIB + EXTENSIONS:
                path = getattr(importlib.import_module(name), "__file__", None)
                # Some ship bytecode only; some build the extensions in (no file: no search).
                if isinstance(path, str) and path.endswith(".py" if name in STDLIB else ".so"):
                    sources.append((name, path))
        for name in modules:
            rel = name.replace(".", "/")
            init = os.path.join(here, rel, "__init__.py")
            path = init if os.path.isfile(init) else os.path.join(here, f"{rel}.py")
            sources.append((f"lookout.{name}", path))
        entries = []
        for name, path in sources:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                # Without docstrings (the hook path reads none, and asserts none): less to
                # unmarshal. An extension is named by its file only (None: no code).
                code = None
                if name not in EXTENSIONS:
                    code = compile(fh.read(), path, "exec", dont_inherit=True, optimize=2)
            entries.append((name, path, st.st_mtime_ns, st.st_size, code))
        target = pack_path(here, group)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = f"{target}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(marshal.dumps((FORMAT, sys.hexversion, tuple(entries))))
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        written.append(target)
    return written
