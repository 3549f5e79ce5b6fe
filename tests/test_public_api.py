"""The public API: SciPy's signatures, and the README's status table."""

import inspect
import re
from pathlib import Path

import pytest
import scipy.ndimage
import skimage.util

import jaxndimage

SKIMAGE_NAMES = {"view_as_blocks", "view_as_windows", "montage"}
# Functions with no SciPy or scikit-image twin.
OWN_NAMES = {"unview_as_blocks", "unview_as_windows", "unmontage",
             "divergence", "value_and_divergence"}
README = Path(__file__).resolve().parents[1] / "README.md"


def _reference(name):
    if name in SKIMAGE_NAMES:
        return getattr(skimage.util, name)
    return getattr(scipy.ndimage, name, None)


def _parameters(func):
    return [(p.name, p.kind, p.default)
            for p in inspect.signature(func).parameters.values()]


def test_every_export_is_a_drop_in_or_documented_as_our_own():
    for name in jaxndimage.__all__:
        assert _reference(name) is not None or name in OWN_NAMES, name


@pytest.mark.parametrize("name", sorted(n for n in jaxndimage.__all__
                                        if n not in OWN_NAMES))
def test_signature_matches_the_reference(name):
    assert _parameters(getattr(jaxndimage, name)) == _parameters(
        _reference(name))


@pytest.mark.parametrize("name", sorted(jaxndimage.__all__))
def test_public_functions_have_docstrings_with_examples(name):
    doc = getattr(jaxndimage, name).__doc__ or ""
    assert "Parameters" in doc and "Returns" in doc and "Examples" in doc


def _readme_table():
    text = README.read_text()
    section = text.split("## scipy.ndimage coverage", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \|$", section, flags=re.M)
    return dict(rows)


def test_readme_coverage_table_is_true():
    table = _readme_table()
    assert set(table) == set(scipy.ndimage.__all__), (
        "README table must list every scipy.ndimage function exactly once")
    implemented = {n for n, status in table.items() if status.startswith("✅")}
    expected = set(scipy.ndimage.__all__) & set(jaxndimage.__all__)
    assert implemented == expected, (
        f"mark as implemented: {sorted(expected - implemented)}; "
        f"unmark: {sorted(implemented - expected)}")
