"""The package's PEP 517 build backend: standard library only, in the tree.

pip builds a package in an isolated environment into which it installs the
backend named in pyproject.toml. A backend fetched from an index (setuptools)
makes `pip install ./packages/python` need the network, and Debian's venv has
setuptools but not the `wheel` package its bdist_wheel needs. This backend is
found through `backend-path` and requires nothing, so pip builds offline in a
plain venv, with --user, and with or without build isolation.

It builds what the package is: pure Python under src/, no extensions, one
top-level package. The wheel and sdist bytes depend only on the files (fixed
timestamps, sorted entries).
"""

import base64
import csv
import gzip
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip can hold
SDIST_FILES = ["pyproject.toml", "README.md", "LICENSE", "build_backend/ctxgate_build.py"]


def _project() -> Dict[str, Any]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:  # Python before 3.11: the subset pyproject.toml uses
        return parse_toml_subset(text)["project"]
    return tomllib.loads(text)["project"]


def parse_toml_subset(text: str) -> Dict[str, Any]:
    """Parses the TOML this package's pyproject.toml uses: [tables], and keys
    whose values are strings, arrays of strings (over several lines) or inline
    tables of strings. Anything else is an error, never a guess."""
    doc: Dict[str, Any] = {}
    table = doc
    lines = iter(text.splitlines())
    for line in lines:
        line = _strip_comment(line).strip()
        if not line:
            continue
        m = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]", line)
        if m:
            table = doc
            for part in m.group(1).split("."):
                table = table.setdefault(part, {})
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError("pyproject.toml: cannot read " + repr(line))
        value = value.strip()
        while value.startswith("[") and not value.endswith("]"):
            value += " " + _strip_comment(next(lines)).strip()
        table[key.strip().strip('"')] = _toml_value(value)
    return doc


def _strip_comment(line: str) -> str:
    out, quoted = [], False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            break
        out.append(ch)
    return "".join(out)


def _toml_value(v: str) -> Any:
    if v.startswith("[") and v.endswith("]"):
        items = [s.strip() for s in _split_top(v[1:-1])]
        return [_toml_value(s) for s in items if s]
    if v.startswith("{") and v.endswith("}"):
        out = {}
        for item in _split_top(v[1:-1]):
            k, _, val = item.partition("=")
            out[k.strip()] = _toml_value(val.strip())
        return out
    if len(v) >= 2 and v[0] == v[-1] == '"' and "\\" not in v:
        return v[1:-1]
    raise ValueError("pyproject.toml: unsupported value " + repr(v))


def _split_top(s: str) -> List[str]:
    parts, cur, quoted = [], [], False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _names() -> Tuple[str, str, Dict[str, Any]]:
    p = _project()
    return re.sub(r"[-_.]+", "_", p["name"]).lower(), p["version"], p


def metadata() -> str:
    """The core metadata (METADATA, PKG-INFO), version 2.1."""
    _, _, p = _names()
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"]]
    if p.get("description"):
        lines.append("Summary: " + p["description"])
    lic = p.get("license")
    if isinstance(lic, dict) and lic.get("text"):
        lines.append("License: " + lic["text"])
    if p.get("keywords"):
        lines.append("Keywords: " + ",".join(p["keywords"]))
    lines += ["Classifier: " + c for c in p.get("classifiers", [])]
    if p.get("requires-python"):
        lines.append("Requires-Python: " + p["requires-python"])
    lines += ["Requires-Dist: " + d for d in p.get("dependencies", [])]
    readme = p.get("readme")
    body = ""
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def _package_files() -> List[Path]:
    """Every file of the importable package, sorted; no caches."""
    return sorted(
        f for f in SRC.rglob("*")
        if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".pyo")
    )


def _wheel(wheel_directory: str, files: List[Tuple[str, bytes]]) -> str:
    name, version, _ = _names()
    dist_info = f"{name}-{version}.dist-info"
    files = files + [
        (f"{dist_info}/METADATA", metadata().encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: ctxgate_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{dist_info}/LICENSE", (ROOT / "LICENSE").read_bytes()),
    ]
    record = io.StringIO()
    w = csv.writer(record, lineterminator="\n")
    for arc, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        w.writerow([arc, "sha256=" + digest, len(data)])
    w.writerow([f"{dist_info}/RECORD", "", ""])
    files.append((f"{dist_info}/RECORD", record.getvalue().encode()))
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            info = zipfile.ZipInfo(arc, EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return filename


# The PEP 517 and PEP 660 hooks. Nothing is needed to build.

def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    return _wheel(wheel_directory, [(f.relative_to(SRC).as_posix(), f.read_bytes()) for f in _package_files()])


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                   metadata_directory: Optional[str] = None) -> str:
    """A wheel whose .pth file puts src/ on sys.path: edits apply at once."""
    name, _, _ = _names()
    return _wheel(wheel_directory, [(f"_{name}_editable.pth", (str(SRC) + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    name, version, _ = _names()
    base = f"{name}-{version}"
    files = [(rel, (ROOT / rel).read_bytes()) for rel in SDIST_FILES]
    files += [(f.relative_to(ROOT).as_posix(), f.read_bytes()) for f in _package_files()]
    files.append(("PKG-INFO", metadata().encode()))
    filename = base + ".tar.gz"
    with open(os.path.join(sdist_directory, filename), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for rel, data in sorted(files):
                    info = tarfile.TarInfo(f"{base}/{rel}")
                    info.size, info.mode, info.mtime = len(data), 0o644, 0
                    tar.addfile(info, io.BytesIO(data))
    return filename
