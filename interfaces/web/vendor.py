"""Fetch the web page's third-party libraries from npm at pinned versions into `vendor/`.

Run by hand when a version changes (`python interfaces/web/vendor.py`), then commit `vendor/`:
the page has no build step and the service never reaches a CDN, so the files ship in the package.
`vendor/VERSIONS` lists each file's package, version and sha256, so a change is visible in review.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENDOR = HERE / "vendor"
# package, version, file inside the npm tarball, name under vendor/ (ES modules the pages import)
PINNED = (
    ("marked", "18.2.1", "package/lib/marked.esm.js", "marked.esm.js"),
    ("dompurify", "3.5.0", "package/dist/purify.es.mjs", "purify.es.js"),
    # the workflow graph's layout (builder_workflows_graph.js); graphlib comes bundled in this build
    ("@dagrejs/dagre", "3.1.4", "package/dist/dagre.esm.js", "dagre.esm.js"),
)


def npm_pack(package: str, version: str, workdir: Path) -> Path:
    """The package's tarball from the npm registry (`npm pack`: the registry's own client)."""
    done = subprocess.run(  # noqa: S603 - fixed arguments from PINNED
        ["npm", "pack", f"{package}@{version}", "--silent"],  # noqa: S607 - npm from PATH, by design
        cwd=workdir, capture_output=True, text=True, check=True,
    )
    return workdir / done.stdout.strip().splitlines()[-1]


def main() -> None:
    VENDOR.mkdir(exist_ok=True)
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for package, version, member, name in PINNED:
            with tarfile.open(npm_pack(package, version, workdir)) as tar:
                source = tar.extractfile(member)
                if source is None:
                    raise SystemExit(f"{package}@{version} has no {member}")
                with (VENDOR / name).open("wb") as target:
                    shutil.copyfileobj(source, target)
            digest = hashlib.sha256((VENDOR / name).read_bytes()).hexdigest()
            lines.append(f"{package} {version} {name} sha256:{digest}")
    (VENDOR / "VERSIONS").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
