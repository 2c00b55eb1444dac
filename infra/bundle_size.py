"""Report the zipped size of the Lambda bundle (the bundled boto3/botocore included).

Usage: ``python -m infra.bundle_size [BUNDLE_DIR]``. Without a directory it assembles the
bundle exactly as CDK's local bundling does (from the pip cache when warm).
Lambda's limits: 50 MB zipped upload, 250 MB unzipped; this project's target is 10 MB.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import zipfile
from pathlib import Path

TARGET_MB = 10.0
# Nothing is left to the runtime any more (boto3 is bundled); kept as a seam for measuring
# "what if the SDK came from the runtime".
EXCLUDED_TOP_LEVEL: tuple[str, ...] = ()


def _excluded(rel: Path) -> bool:
    top = rel.parts[0]
    return any(top == name or top.startswith(f"{name}-") for name in EXCLUDED_TOP_LEVEL)


def zipped_size(bundle_dir: Path) -> tuple[int, int, int]:
    """(zipped bytes, unzipped bytes, file count) of ``bundle_dir`` as Lambda would receive it."""
    buf = io.BytesIO()
    unzipped = files = 0
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for root, dirs, names in os.walk(bundle_dir):
            dirs.sort()
            for name in sorted(names):
                path = Path(root) / name
                rel = path.relative_to(bundle_dir)
                if _excluded(rel):
                    continue
                zf.write(path, rel.as_posix())
                unzipped += path.stat().st_size
                files += 1
    return len(buf.getvalue()), unzipped, files


def report(bundle_dir: Path | None = None) -> dict[str, float | int | str]:
    """Size report as a dict; MB are decimal (10**6 bytes), as in the Lambda quotas."""
    if bundle_dir is None:
        os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
        from elsai.cdk.bundling import assemble_bundle

        with tempfile.TemporaryDirectory() as tmp:
            assemble_bundle(Path(tmp))
            return report(Path(tmp))
    zipped, unzipped, files = zipped_size(bundle_dir)
    return {
        "bundle": str(bundle_dir),
        "files": files,
        "zipped_mb": round(zipped / 1e6, 2),
        "unzipped_mb": round(unzipped / 1e6, 2),
        "target_mb": TARGET_MB,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle_dir", nargs="?", type=Path)
    args = parser.parse_args(argv)
    r = report(args.bundle_dir)
    print(
        f"Lambda bundle: {r['zipped_mb']} MB zipped, {r['unzipped_mb']} MB unzipped, "
        f"{r['files']} files (boto3 included; target <= {TARGET_MB} MB zipped)"
    )
    return 0 if float(r["zipped_mb"]) <= TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
