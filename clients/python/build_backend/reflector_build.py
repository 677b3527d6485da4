"""A PEP 517 build backend for reflector-client, standard library only.

It builds the wheel (and an sdist, and an editable wheel per PEP 660) from src/reflector_client
and the [project] table of pyproject.toml, so installing needs no setuptools, wheel or network.
The package is pure Python: one `py3-none-any` wheel.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "reflector_client"


def _project():
    """The [project] table's flat keys (strings and lists of strings)."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib  # Python 3.11 and later

        return tomllib.loads(raw.decode("utf-8"))["project"]
    except ImportError:
        pass
    # Older Pythons: the flat `key = "text"` and `key = [...]` lines of the [project] table.
    project, inside = {}, False
    for line in raw.decode("utf-8").splitlines():
        section = re.match(r"\s*\[([^\]]+)\]", line)
        if section:
            inside = section.group(1).strip() == "project"
            continue
        pair = re.match(r'\s*([\w-]+)\s*=\s*(".*"|\[.*\])\s*$', line) if inside else None
        if pair:
            value = pair.group(2)
            project[pair.group(1)] = re.findall(r'"((?:[^"\\]|\\.)*)"', value) if value.startswith("[") else value[1:-1]
    return project


def _names():
    project = _project()
    return project, re.sub(r"[-_.]+", "_", project["name"]).lower(), project["version"]


def _metadata():
    project, _, version = _names()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3')}",
    ]
    if isinstance(project.get("license"), str):
        lines.append(f"License: {project['license']}")
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str) and os.path.exists(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _package_files():
    src = os.path.join(ROOT, "src", PACKAGE)
    for name in sorted(os.listdir(src)):
        if name.endswith(".py") or name == "py.typed":
            yield f"{PACKAGE}/{name}", os.path.join(src, name)


def _write_wheel(wheel_directory, files):
    """A wheel of these (archive name, bytes) pairs plus its .dist-info; returns the wheel's name."""
    _, dist, version = _names()
    info = f"{dist}-{version}.dist-info"
    entries = list(files) + [
        (f"{info}/METADATA", _metadata().encode("utf-8")),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: reflector_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = []
    for name, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    wheel_name = f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as whl:
        for name, data in entries:
            whl.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data)
    return wheel_name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(name, _read(path)) for name, path in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts src/ on the path, so edits take effect at once."""
    _, dist, _ = _names()
    return _write_wheel(wheel_directory, [(f"_{dist}_editable.pth", (os.path.join(ROOT, "src") + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    _, dist, version = _names()
    base = f"{dist}-{version}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add(arcname, data):
            member = tarfile.TarInfo(f"{base}/{arcname}")
            member.size, member.mtime, member.mode = len(data), 1767225600, 0o644
            tar.addfile(member, io.BytesIO(data))

        add("PKG-INFO", _metadata().encode("utf-8"))
        for rel in ("pyproject.toml", "README.md", "build_backend/reflector_build.py"):
            if os.path.exists(os.path.join(ROOT, rel)):
                add(rel, _read(os.path.join(ROOT, rel)))
        for arcname, path in _package_files():
            add(f"src/{arcname}", _read(path))
    return name
