"""A PEP 517 build backend in the standard library alone.

This machine, like many offline or locked-down ones, reaches no package
index, and setuptools needs `wheel` to build one; a wheel is a ZIP with a
known layout, so the package builds itself. `pip install ./sdk/python`
needs nothing else.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "assent"


def _version():
    with open(os.path.join(ROOT, "assent", "_version.py"), encoding="utf-8") as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def _metadata():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Assent's Python SDK: ask a person before an AI agent acts.\n"
            "Requires-Python: >=3.9\nClassifier: Programming Language :: Python :: 3\nClassifier: Typing :: Typed\n"
            "Description-Content-Type: text/markdown\n\n%s" % (NAME, _version(), readme))


def _files():
    for folder, _, names in os.walk(os.path.join(ROOT, "assent")):
        if "__pycache__" in folder:
            continue
        for name in sorted(names):
            if name.endswith((".py", ".typed")):
                full = os.path.join(folder, name)
                yield full, os.path.relpath(full, ROOT).replace(os.sep, "/")


def _wheel(directory, editable=False):
    version = _version()
    dist_info = "%s-%s.dist-info" % (NAME, version)
    filename = "%s-%s-py3-none-any.whl" % (NAME, version)
    records = []

    def add(z, arcname, data):
        z.writestr(zipfile.ZipInfo(arcname, (2020, 1, 1, 0, 0, 0)), data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        records.append("%s,sha256=%s,%d" % (arcname, digest, len(data)))

    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        if editable:
            add(z, NAME + "_editable.pth", (ROOT + "\n").encode())
        else:
            for full, arcname in _files():
                with open(full, "rb") as f:
                    add(z, arcname, f.read())
        add(z, dist_info + "/METADATA", _metadata().encode("utf-8"))
        add(z, dist_info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: assent_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        records.append(dist_info + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(dist_info + "/RECORD", (2020, 1, 1, 0, 0, 0)), "\n".join(records) + "\n")
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, editable=True)


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", "_build/assent_build.py"]:
            tar.add(os.path.join(ROOT, rel), base + "/" + rel)
        for full, arcname in _files():
            tar.add(full, base + "/" + arcname)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = _metadata().encode("utf-8")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return filename
