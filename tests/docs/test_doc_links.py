"""Every relative link in README.md and docs/*.md points at a file that exists.

A link with a `#fragment` into a markdown page must name one of that page's headings, slugged
the way GitHub renders them, so moving a section breaks this test rather than the reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = (
    "README.md",
    "lambdas/README.md",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
)
FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def prose(text: str) -> str:
    """The page without code blocks (links and headings inside them are not links or headings)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for heading in HEADING.findall(prose(page.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def relative_links(name: str) -> list[str]:
    text = INLINE_CODE.sub("", prose((ROOT / name).read_text()))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_slug_matches_github() -> None:
    assert slug("Tenant isolation and the trust model") == "tenant-isolation-and-the-trust-model"
    assert slug("5. Deploy, and the outputs") == "5-deploy-and-the-outputs"
    assert (
        slug("The jobs API offline: `elsai jobs serve`") == "the-jobs-api-offline-elsai-jobs-serve"
    )


def test_every_page_links_somewhere() -> None:
    assert all(relative_links(name) for name in PAGES if name.startswith("docs/"))


@pytest.mark.parametrize("name", PAGES)
def test_relative_links_resolve(name: str) -> None:
    broken = []
    for target in relative_links(name):
        path, _, fragment = target.partition("#")
        dest = (ROOT / name).parent / path if path else ROOT / name
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.relative_to(ROOT)}")
    assert not broken, f"{name}:\n" + "\n".join(broken)
