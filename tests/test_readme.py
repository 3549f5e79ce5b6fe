"""The interactive examples of the README and of the pages in docs/ run
and print what they show."""

import doctest
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


#: The pages whose examples are interactive (``>>>``): each must have some.
INTERACTIVE = {"patches.md", "divergence.md"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_examples(page):
    result = doctest.testfile(str(page), module_relative=False,
                              optionflags=doctest.ELLIPSIS
                              | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0 or page.name not in INTERACTIVE
