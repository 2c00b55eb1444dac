"""The package's long description: README.md with its relative links made absolute.

Everything else about the package is in pyproject.toml. On the package index there is no
repository around the README, so a link such as ``docs/deploying.md`` would be dead there; at
build time each relative link becomes one into the repository named by ``[project.urls]``
``Repository`` in pyproject.toml (the one place that address is written): a page under
``blob/<REF>/``, a folder under ``tree/<REF>/``, an image under ``raw/<REF>/``, an in-page
anchor on the repository's front page. ``tests/unit/test_packaging.py`` checks that nothing
relative is left and that every link points at a file of the checkout.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
#: The branch the links name.
REF = "main"

# An inline link or image: ``[text](target)`` or ``![alt](target "title")``.
_INLINE = re.compile(
    r"(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)"
)
# A reference definition: ``[label]: target`` at the start of a line.
_REFERENCE = re.compile(r"(?m)^(?P<label> {0,3}\[[^\]]+\]:\s*)(?P<target>\S+)")
# The opening or closing line of a fenced code block.
_FENCE = re.compile(r"^ {0,3}(?P<marker>`{3,}|~{3,})")
# A URL with a scheme (``https:``, ``mailto:``) or protocol-relative: left alone.
_ABSOLUTE = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")


def repository_url(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The ``Repository`` entry of ``[project.urls]``, without a trailing slash."""
    urls = tomllib.loads(pyproject.read_text())["project"]["urls"]
    return str(urls["Repository"]).rstrip("/")


def absolute(target: str, repository: str, image: bool = False) -> str:
    """``target`` (a link of README.md) as an address that works outside the repository."""
    if _ABSOLUTE.match(target):
        return target
    if target.startswith("#"):
        return f"{repository}{target}"
    path = target.removeprefix("./")
    kind = "raw" if image else "tree" if path.split("#", 1)[0].endswith("/") else "blob"
    return f"{repository}/{kind}/{REF}/{path}"


def absolute_links(markdown: str, repository: str) -> str:
    """``markdown`` with every relative link and image made absolute against ``repository``.

    Fenced code blocks are left as they are: ``tools[0](x)`` in an example is not a link.
    """

    def inline(match: re.Match[str]) -> str:
        target = absolute(match["target"], repository, image=bool(match["bang"]))
        return f"{match['bang']}[{match['text']}]({target}{match['title'] or ''})"

    def reference(match: re.Match[str]) -> str:
        return f"{match['label']}{absolute(match['target'], repository)}"

    def prose(text: str) -> str:
        return _REFERENCE.sub(reference, _INLINE.sub(inline, text))

    out: list[str] = []
    fence = ""  # the open fence's marker, "" outside code
    for line in markdown.splitlines(keepends=True):
        marker = _FENCE.match(line)
        if fence:
            if marker and marker["marker"].startswith(fence) and not line.strip(" \n`~"):
                fence = ""
            out.append(line)
        elif marker:
            fence = marker["marker"]
            out.append(line)
        else:
            out.append(prose(line))
    return "".join(out)


def long_description() -> str:
    """README.md as the package index shows it."""
    return absolute_links((ROOT / "README.md").read_text(encoding="utf-8"), repository_url())


if __name__ == "__main__":  # setuptools runs this file as __main__ when it builds
    from setuptools import setup

    setup(long_description=long_description(), long_description_content_type="text/markdown")
