"""Every relative link and every repository path in backticks of the docs names what exists.

The pages: README.md, docs/*.md and each area folder's README (elsai/**/README.md,
lambdas/**/README.md). A link with a `#fragment` into a markdown page must name one of that
page's headings, slugged the way GitHub renders them, so moving a section breaks this test
rather than the reader.

A path in backticks that starts at one of the repository's top-level folders
(`elsai/serverless/contract/steps.py`) must exist on every page. The area READMEs and the
feature index (docs/features.md) are maps of the code, so there every path-like name in
backticks must exist: read from the folder the page last named, the page's own folder or the
repository root (`tests/unit/cdk/`, then `test_contract.py`), and every dotted `elsai...` name
must be a module, or a name its module defines. A name with a placeholder (`routes/<x>.py`,
`jobs/*/version.json`) is not a path.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The READMEs of the area folders: what lives there, its imports, its tests, how to add to it.
AREA_READMES = tuple(
    sorted(
        str(p.relative_to(ROOT))
        for top in ("elsai", "lambdas")
        for p in (ROOT / top).rglob("README.md")
    )
)
#: Pages that map the code: every path-like name in their backticks is checked.
CODE_MAPS = (*AREA_READMES, "docs/features.md")
PAGES = (
    "README.md",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
    *AREA_READMES,
)
#: The repository's top-level folders: a backticked path starting at one of them is a path.
TOP_FOLDERS = (
    "bench",
    "docs",
    "elsai",
    "examples",
    "infra",
    "lambdas",
    "locks",
    "scripts",
    "tests",
)
FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`([^`\n]*)`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
# Names, dots, dashes and slashes only: `<placeholder>`, `*`, `{id}`, spaces make it no path.
PATH_LIKE = re.compile(r"[\w.-]+(?:/[\w.-]+)*/?")
MEDIA_TYPE = re.compile(r"(?:text|application|image)/")
MODULE = re.compile(r"elsai(?:_lambdas)?(?:\.[A-Za-z_]\w*)+")


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


def code_spans(text: str) -> list[str]:
    """The contents of the inline code spans of a page's prose, in order."""
    return [span.strip() for span in INLINE_CODE.findall(prose(text)) if span.strip()]


def is_path(span: str, *, every: bool) -> bool:
    """Whether a code span names a repository path.

    On every page: a path from a top-level folder. With `every` (the pages that map the code):
    any name with a slash, or ending in .py or .md.
    """
    if not PATH_LIKE.fullmatch(span) or MEDIA_TYPE.match(span):
        return False
    if span.split("/", 1)[0] in TOP_FOLDERS and "/" in span:
        return True
    return every and ("/" in span or span.endswith((".py", ".md")))


def module_exists(dotted: str) -> bool:
    """`elsai.x.y` is a module of the checkout, or `y` is a name found in module `elsai.x`."""
    parts = dotted.split(".")
    folder = ROOT / ("lambdas" if parts[0] == "elsai_lambdas" else "elsai")

    def source(names: list[str]) -> Path | None:
        base = folder.joinpath(*names)
        found = [p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()]
        return found[0] if found else None

    if source(parts[1:]) is not None:
        return True
    module = source(parts[1:-1])
    return module is not None and re.search(rf"\b{parts[-1]}\b", module.read_text()) is not None


def missing_paths(page: Path, text: str, *, every: bool) -> list[str]:
    """The backticked paths (and, with `every`, dotted module names) of `text` that do not exist.

    A path is read from the folder the page named last, then the page's folder, then the
    repository root; a path that exists becomes the folder named last.
    """
    missing: list[str] = []
    context = page.parent
    for span in code_spans(text):
        if every and MODULE.fullmatch(span):
            if not module_exists(span):
                missing.append(f"{span}: no such module or name")
            continue
        if not is_path(span, every=every):
            continue
        bases = (context, page.parent, ROOT) if every else (ROOT,)
        found = next((base / span for base in bases if (base / span).exists()), None)
        if found is None:
            missing.append(f"{span}: no such file or folder")
        else:
            context = found if found.is_dir() else found.parent
    return missing


def test_the_path_check_finds_what_is_missing_and_reads_names_in_context() -> None:
    page = ROOT / "elsai" / "serverless" / "README.md"
    text = (
        "`tests/unit/cdk/`, then `test_contract.py` and `test_no_such.py`; `slice.py` here;"
        " `routes/<resource>.py`, `jobs/*/version.json`, `text/event-stream` are no paths;"
        " `elsai.serverless.contract.steps.STEPS`, `elsai_lambdas.agent_handler.handler`,"
        " `elsai.serverless.nowhere`, `elsai/no_such_folder/`\n```\n`tests/not/checked.py`\n```\n"
    )
    assert missing_paths(page, text, every=True) == [
        "test_no_such.py: no such file or folder",
        "elsai.serverless.nowhere: no such module or name",
        "elsai/no_such_folder/: no such file or folder",
    ]
    # Elsewhere only paths from a top-level folder are checked, from the root.
    assert missing_paths(page, text, every=False) == [
        "elsai/no_such_folder/: no such file or folder"
    ]


def test_the_top_level_folders_exist() -> None:
    assert all((ROOT / name).is_dir() for name in TOP_FOLDERS)


def test_every_area_folder_has_its_readme() -> None:
    areas = ("session", "loop", "models", "multiagent", "serverless", "cdk", "local", "console")
    assert {f"elsai/{a}/README.md" for a in areas} | {"lambdas/README.md"} <= set(AREA_READMES)


@pytest.mark.parametrize("name", PAGES)
def test_paths_in_backticks_exist(name: str) -> None:
    page = ROOT / name
    missing = missing_paths(page, page.read_text(), every=name in CODE_MAPS)
    assert not missing, f"{name}:\n" + "\n".join(missing)
