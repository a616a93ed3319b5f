# SPDX-License-Identifier: Apache-2.0
"""The archives the build backend (rngtrk_build.py) writes: the wheel (a
zip file with a .dist-info folder: METADATA, WHEEL, LICENSE, RECORD with
every file's sha256) and the sdist (a tar.gz of the package, this backend's
modules and what building the library needs, at their repository paths).
"""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

import rngtrk_build_compile as compiler
import rngtrk_build_metadata as metadata
from rngtrk_build_errors import BuildError


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(directory, files, tag, purelib, dist_info_files=()):
    dist_info = f"{metadata.PACKAGE}-{metadata._version()}.dist-info"
    wheel_text = (f"Wheel-Version: 1.0\nGenerator: rngtrk_build\nRoot-Is-Purelib: {str(purelib).lower()}\n"
                  f"Tag: {tag}\n")
    files = files + [(f"{dist_info}/METADATA", metadata._metadata().encode()),
                     (f"{dist_info}/WHEEL", wheel_text.encode()),
                     (f"{dist_info}/LICENSE", metadata._top_file("LICENSE"))] + \
        [(f"{dist_info}/{name}", data) for name, data in dist_info_files]
    record = "\n".join(_record_line(p, d) for p, d in files) + f"\n{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode()))
    filename = f"{metadata.PACKAGE}-{metadata._version()}-{tag}.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            is_library = path.endswith(".so." + metadata._version().split(".")[0])
            info.external_attr = (0o755 if is_library else 0o644) << 16
            wheel.writestr(info, data, zipfile.ZIP_DEFLATED)
    return filename


def _backend_files():
    """This backend's modules, as paths below the package folder: every
    build_backend/*.py, so that the unpacked sdist's backend is whole."""
    folder = os.path.join(metadata.HERE, "build_backend")
    return [f"build_backend/{name}" for name in sorted(os.listdir(folder)) if name.endswith(".py")]


def _write_sdist(directory):
    """The sdist in `directory` (see rngtrk_build.build_sdist); its name."""
    base = f"{metadata.PACKAGE}-{metadata._version()}"
    members = [(metadata.HERE, "pyproject.toml")] + [(metadata.HERE, path) for path in _backend_files()]
    members += [(metadata.HERE, path) for path, _ in metadata._package_files()]
    root = metadata._source_root()
    if root is None:
        raise BuildError("rngtrk: an sdist needs the library's sources: build it from an rngtrk checkout")
    members += [(root, path) for path in compiler._library_sources(root)]
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for folder, path in members:
            sdist.add(os.path.join(folder, path), arcname=f"{base}/{path}")
        for name, data in (("PKG-INFO", metadata._metadata().encode()),
                           ("README.md", metadata._top_file("README.md")),
                           ("LICENSE", metadata._top_file("LICENSE"))):
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size = len(data)
            info.mode = 0o644
            sdist.addfile(info, io.BytesIO(data))
    return filename
