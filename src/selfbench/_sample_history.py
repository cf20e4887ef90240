"""A sample repository with a history of merged pull requests, one or more per tier.

`unitkit` is a small Python library (pytest, tests under `tests/`, sources under `src/`). Its
history, oldest first, each commit a day after the last, by fixed authors, so commit ids never
change:

* `Initial unitkit`: the base (lengths and formatting, with passing tests).
* #1 (squash) unit names for lengths: one implementation file, new and kept tests: **easy**.
* #2 (squash) documentation only: mining excludes it.
* #3 (merge) mass units: three implementation files under 100 changed lines, a new test file,
  a new `conftest.py` fixture and a test added to an existing file: **medium**.
* #4 (merge) temperatures and conversion by name: four implementation files over 100 lines, a
  version bump in `pyproject.toml`, a changelog, two new test files and a test added to an
  existing one: **hard**.
* #5 (squash) a refactor whose new tests already pass at the base: an easy candidate with no
  fail-to-pass test, which drafting must reject.
* #6 (squash) a refactor with no test changes: easy-sized, but mining excludes it (no test
  file a known runner runs).

Each good pull request's tests fail before its change and pass after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from selfbench._git import git

__all__ = ["SAMPLE_PULL_REQUESTS", "SamplePullRequest", "build_sample_history"]

_AUTHOR = ("Ada Example", "ada@example.com")
_MERGER = ("Grace Example", "grace@example.com")
_START = 1_767_571_200  # 2026-01-05T00:00:00Z
_DAY = 86_400


@dataclass(frozen=True, slots=True)
class SamplePullRequest:
    """One pull request of the sample history and what mining and drafting make of it."""

    number: int
    title: str
    body: str
    kind: str  # "merge" or "squash"
    branch: str
    files: dict[str, str | None]
    tier: str | None  # the tier mining assigns, None when it excludes the change
    drafts: bool  # whether drafting can make a task of it


_README = """\
# unitkit

Convert quantities between units.

    >>> from unitkit import convert_length
    >>> convert_length(2, "km", "m")
    2000.0
"""

_PYPROJECT = """\
[project]
name = "unitkit"
version = "{version}"
requires-python = ">=3.10"

[project.optional-dependencies]
test = ["pytest"]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
"""

_INIT_BASE = '''\
"""Convert quantities between units."""

from unitkit.formatting import format_quantity
from unitkit.length import convert_length

__all__ = ["convert_length", "format_quantity"]
'''

_LENGTH_BASE = '''\
"""Lengths: metres and the units defined from them."""

_METRES = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048}


def convert_length(value: float, source: str, target: str) -> float:
    """Convert `value` from the unit `source` to the unit `target`."""
    for unit in (source, target):
        if unit not in _METRES:
            raise ValueError(f"unknown length unit: {unit}")
    return value * _METRES[source] / _METRES[target]
'''

_FORMATTING_BASE = '''\
"""Human-readable quantities."""


def format_quantity(value: float, unit: str, *, precision: int = 2) -> str:
    """`value` rounded to `precision` decimals, trailing zeros dropped, then the unit."""
    text = f"{value:.{precision}f}".rstrip("0").rstrip(".")
    return f"{text} {unit}"
'''

_TEST_LENGTH_BASE = """\
import pytest

from unitkit import convert_length


def test_kilometres_to_metres():
    assert convert_length(2, "km", "m") == 2000


def test_inches_to_centimetres():
    assert convert_length(1, "in", "cm") == pytest.approx(2.54)


def test_unknown_unit_is_refused():
    with pytest.raises(ValueError, match="unknown length unit: parsec"):
        convert_length(1, "parsec", "m")
"""

_TEST_FORMATTING_BASE = """\
from unitkit import format_quantity


def test_trailing_zeros_are_dropped():
    assert format_quantity(2.50, "m") == "2.5 m"


def test_precision_rounds():
    assert format_quantity(1.23456, "km", precision=3) == "1.235 km"
"""

BASE: dict[str, str | None] = {
    ".gitignore": ".venv/\n__pycache__/\n.pytest_cache/\n",
    "README.md": _README,
    "pyproject.toml": _PYPROJECT.format(version="0.1.0"),
    "src/unitkit/__init__.py": _INIT_BASE,
    "src/unitkit/length.py": _LENGTH_BASE,
    "src/unitkit/formatting.py": _FORMATTING_BASE,
    "tests/test_length.py": _TEST_LENGTH_BASE,
    "tests/test_formatting.py": _TEST_FORMATTING_BASE,
}

# --- #1: unit names (easy) ---------------------------------------------------------------------

_LENGTH_NAMES = '''\
"""Lengths: metres and the units defined from them."""

_METRES = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048}

# Full names of the units, in their British and American spellings.
_NAMES = {
    "millimetre": "mm",
    "millimeter": "mm",
    "centimetre": "cm",
    "centimeter": "cm",
    "metre": "m",
    "meter": "m",
    "kilometre": "km",
    "kilometer": "km",
    "inch": "in",
    "foot": "ft",
}
_IRREGULAR_PLURALS = {"inches": "inch", "feet": "foot"}


def _symbol(unit: str) -> str:
    """The symbol of a length unit given by its symbol or by its name, singular or plural."""
    if unit in _METRES:
        return unit
    name = unit.strip().lower()
    name = _IRREGULAR_PLURALS.get(name, name)
    if name.endswith("s") and name[:-1] in _NAMES:
        name = name[:-1]
    if name not in _NAMES:
        raise ValueError(f"unknown length unit: {unit}")
    return _NAMES[name]


def convert_length(value: float, source: str, target: str) -> float:
    """Convert `value` from the unit `source` to the unit `target` (symbols or names)."""
    return value * _METRES[_symbol(source)] / _METRES[_symbol(target)]
'''

_TEST_LENGTH_NAMES = (
    _TEST_LENGTH_BASE
    + """

@pytest.mark.parametrize(
    ("source", "expected"),
    [("kilometres", 5000), ("Kilometers", 5000), ("kilometre", 5000), ("metres per day", None)],
)
def test_unit_names_are_accepted(source, expected):
    if expected is None:
        with pytest.raises(ValueError, match="unknown length unit"):
            convert_length(5, source, "m")
    else:
        assert convert_length(5, source, "m") == expected


def test_irregular_plurals():
    assert convert_length(3, "feet", "inches") == pytest.approx(36)
"""
)

# --- #3: mass units (medium) -------------------------------------------------------------------

_MASS = '''\
"""Masses: grams and the units defined from them."""

_GRAMS = {
    "mg": 0.001,
    "g": 1.0,
    "kg": 1000.0,
    "t": 1_000_000.0,
    "oz": 28.349523125,
    "lb": 453.59237,
    "st": 6350.29318,
}


def convert_mass(value: float, source: str, target: str) -> float:
    """Convert `value` from the mass unit `source` to the mass unit `target`.

    A negative mass has no meaning and is refused.
    """
    if value < 0:
        raise ValueError(f"a mass cannot be negative: {value}")
    for unit in (source, target):
        if unit not in _GRAMS:
            raise ValueError(f"unknown mass unit: {unit}")
    return value * _GRAMS[source] / _GRAMS[target]


def mass_units() -> tuple[str, ...]:
    """The mass units, lightest first."""
    return tuple(sorted(_GRAMS, key=_GRAMS.__getitem__))


def total_mass(readings: list[tuple[float, str]], unit: str) -> float:
    """The sum of several `(value, unit)` readings, in `unit`.

    Each reading may use its own unit; an empty list weighs nothing.
    """
    total = 0.0
    for value, source in readings:
        total += convert_mass(value, source, "g")
    return convert_mass(total, "g", unit)
'''

_INIT_MASS = '''\
"""Convert quantities between units."""

from unitkit.formatting import format_quantity
from unitkit.length import convert_length
from unitkit.mass import convert_mass, mass_units, total_mass

__all__ = ["convert_length", "convert_mass", "format_quantity", "mass_units", "total_mass"]
'''

_FORMATTING_MASS = '''\
"""Human-readable quantities."""


def format_quantity(value: float, unit: str, *, precision: int = 2) -> str:
    """`value` rounded to `precision` decimals, trailing zeros dropped, then the unit.

    Thousands are grouped with commas, so large masses stay readable.
    """
    text = f"{value:,.{precision}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {unit}"
'''

_CONFTEST_MASS = """\
import pytest


@pytest.fixture
def kitchen_scale():
    \"\"\"Readings of a kitchen scale, in grams, with the unit a recipe asks for.\"\"\"
    return [(250, "oz", 8.8185), (1000, "lb", 2.2046), (5, "g", 5)]
"""

_TEST_MASS = """\
import pytest

from unitkit import convert_mass, mass_units, total_mass


def test_kitchen_scale_readings(kitchen_scale):
    for grams, unit, expected in kitchen_scale:
        assert convert_mass(grams, "g", unit) == pytest.approx(expected, rel=1e-4)


def test_tonnes_to_kilograms():
    assert convert_mass(2, "t", "kg") == 2000


def test_negative_mass_is_refused():
    with pytest.raises(ValueError, match="cannot be negative"):
        convert_mass(-1, "kg", "g")


def test_unknown_mass_unit_is_refused():
    with pytest.raises(ValueError, match="unknown mass unit: grain"):
        convert_mass(1, "grain", "g")


def test_units_lightest_first():
    assert mass_units() == ("mg", "g", "oz", "lb", "kg", "st", "t")


def test_total_of_mixed_readings():
    assert total_mass([(1, "kg"), (500, "g")], "kg") == pytest.approx(1.5)
    assert total_mass([], "lb") == 0
"""

_TEST_FORMATTING_MASS = (
    _TEST_FORMATTING_BASE
    + """

def test_thousands_are_grouped():
    assert format_quantity(12345.678, "g") == "12,345.68 g"
"""
)

# --- #4: temperatures and conversion by name (hard) --------------------------------------------

_TEMPERATURE = '''\
"""Temperatures: unlike other units they differ by an offset as well as a factor."""

ABSOLUTE_ZERO_KELVIN = 0.0

# unit -> (factor, offset) such that kelvin = value * factor + offset
_KELVIN = {
    "K": (1.0, 0.0),
    "C": (1.0, 273.15),
    "F": (5 / 9, 273.15 - 32 * 5 / 9),
    "R": (5 / 9, 0.0),
}


def to_kelvin(value: float, unit: str) -> float:
    """`value` in `unit` as kelvin; below absolute zero is refused."""
    if unit not in _KELVIN:
        raise ValueError(f"unknown temperature unit: {unit}")
    factor, offset = _KELVIN[unit]
    kelvin = value * factor + offset
    if kelvin < ABSOLUTE_ZERO_KELVIN - 1e-9:
        raise ValueError(f"below absolute zero: {value} {unit}")
    return kelvin


def from_kelvin(kelvin: float, unit: str) -> float:
    """`kelvin` expressed in `unit`."""
    if unit not in _KELVIN:
        raise ValueError(f"unknown temperature unit: {unit}")
    factor, offset = _KELVIN[unit]
    return (kelvin - offset) / factor


def convert_temperature(value: float, source: str, target: str) -> float:
    """Convert `value` from the temperature unit `source` to `target` (K, C, F or R)."""
    return from_kelvin(to_kelvin(value, source), target)


def temperature_units() -> tuple[str, ...]:
    """The temperature units this module knows."""
    return tuple(_KELVIN)
'''

_CONVERT = '''\
"""One entry point for every dimension: `convert(value, source, target)`."""

from collections.abc import Callable

from unitkit.length import _METRES, convert_length
from unitkit.mass import convert_mass, mass_units, total_mass
from unitkit.temperature import convert_temperature, temperature_units

_Converter = Callable[[float, str, str], float]


def _dimensions() -> dict[str, tuple[str, _Converter]]:
    """unit -> (dimension, converter), for every unit of every dimension."""
    table: dict[str, tuple[str, _Converter]] = {}
    for unit in _METRES:
        table[unit] = ("length", convert_length)
    for unit in mass_units():
        table[unit] = ("mass", convert_mass)
    for unit in temperature_units():
        table[unit] = ("temperature", convert_temperature)
    return table


def dimension_of(unit: str) -> str:
    """The dimension a unit measures: length, mass or temperature."""
    found = _dimensions().get(unit)
    if found is None:
        raise ValueError(f"unknown unit: {unit}")
    return found[0]


def convert(value: float, source: str, target: str) -> float:
    """Convert between any two units of the same dimension."""
    table = _dimensions()
    for unit in (source, target):
        if unit not in table:
            raise ValueError(f"unknown unit: {unit}")
    (source_dimension, converter), (target_dimension, _) = table[source], table[target]
    if source_dimension != target_dimension:
        raise ValueError(f"cannot convert {source_dimension} to {target_dimension}")
    return converter(value, source, target)
'''

_INIT_TEMPERATURE = '''\
"""Convert quantities between units."""

from unitkit.convert import convert, dimension_of
from unitkit.formatting import format_quantity
from unitkit.length import convert_length
from unitkit.mass import convert_mass, mass_units, total_mass
from unitkit.temperature import convert_temperature, temperature_units

__all__ = [
    "convert",
    "convert_length",
    "convert_mass",
    "convert_temperature",
    "dimension_of",
    "format_quantity",
    "mass_units",
    "temperature_units",
    "total_mass",
]
'''

_FORMATTING_TEMPERATURE = '''\
"""Human-readable quantities."""

# Units shown with a symbol other than their own name.
_DISPLAY = {"C": "\\u00b0C", "F": "\\u00b0F", "R": "\\u00b0R"}


def format_quantity(value: float, unit: str, *, precision: int = 2) -> str:
    """`value` rounded to `precision` decimals, trailing zeros dropped, then the unit.

    Thousands are grouped with commas, so large masses stay readable. Temperatures in degrees
    are shown with the degree sign.
    """
    text = f"{value:,.{precision}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {_DISPLAY.get(unit, unit)}"
'''

_TEST_TEMPERATURE = """\
import pytest

from unitkit import convert_temperature, temperature_units


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (100, "C", "F", 212),
        (32, "F", "C", 0),
        (0, "K", "C", -273.15),
        (491.67, "R", "K", 273.15),
    ],
)
def test_conversions(value, source, target, expected):
    assert convert_temperature(value, source, target) == pytest.approx(expected)


def test_below_absolute_zero_is_refused():
    with pytest.raises(ValueError, match="below absolute zero"):
        convert_temperature(-300, "C", "K")


def test_units():
    assert set(temperature_units()) == {"K", "C", "F", "R"}
"""

_TEST_CONVERT = """\
import pytest

from unitkit import convert, dimension_of


def test_converts_any_dimension():
    assert convert(1, "km", "m") == 1000
    assert convert(1, "kg", "g") == 1000
    assert convert(0, "C", "K") == pytest.approx(273.15)


def test_dimensions_must_agree():
    with pytest.raises(ValueError, match="cannot convert length to mass"):
        convert(1, "m", "kg")


def test_dimension_of():
    assert [dimension_of(unit) for unit in ("ft", "lb", "F")] == ["length", "mass", "temperature"]
"""

_TEST_FORMATTING_TEMPERATURE = (
    _TEST_FORMATTING_MASS
    + """

def test_degrees_have_the_degree_sign():
    assert format_quantity(21.5, "C") == "21.5 \\u00b0C"
"""
)

_CHANGELOG = """\
# Changes

## 0.2.0

* Temperatures (kelvin, Celsius, Fahrenheit, Rankine) and `convert` for any two units.
"""

# --- #5: a refactor whose new tests already pass ------------------------------------------------

_LENGTH_FACTORS = '''\
"""Lengths: metres and the units defined from them."""

from functools import lru_cache

_METRES = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048}

# Full names of the units, in their British and American spellings.
_NAMES = {
    "millimetre": "mm",
    "millimeter": "mm",
    "centimetre": "cm",
    "centimeter": "cm",
    "metre": "m",
    "meter": "m",
    "kilometre": "km",
    "kilometer": "km",
    "inch": "in",
    "foot": "ft",
}
_IRREGULAR_PLURALS = {"inches": "inch", "feet": "foot"}


@lru_cache(maxsize=256)
def _symbol(unit: str) -> str:
    """The symbol of a length unit given by its symbol or by its name, singular or plural.

    Cached: the same few unit names are looked up again and again.
    """
    if unit in _METRES:
        return unit
    name = _IRREGULAR_PLURALS.get(unit.strip().lower(), unit.strip().lower())
    singular = name[:-1] if name.endswith("s") else name
    for candidate in (name, singular):
        if candidate in _NAMES:
            return _NAMES[candidate]
    raise ValueError(f"unknown length unit: {unit}")


@lru_cache(maxsize=256)
def _factor(source: str, target: str) -> float:
    """The factor taking a value in `source` to `target`, computed once per pair."""
    return _METRES[_symbol(source)] / _METRES[_symbol(target)]


def convert_length(value: float, source: str, target: str) -> float:
    """Convert `value` from the unit `source` to the unit `target` (symbols or names)."""
    return value * _factor(source, target)
'''

_TEST_LENGTH_FACTORS = (
    _TEST_LENGTH_NAMES
    + """

@pytest.mark.parametrize("unit", ["mm", "cm", "m", "km", "in", "ft"])
def test_round_trip(unit):
    assert convert_length(convert_length(7, "m", unit), unit, "m") == pytest.approx(7)
"""
)

# --- #6: a refactor without test changes --------------------------------------------------------

_FORMATTING_TIDY = '''\
"""Human-readable quantities: a number, rounded and grouped, then its unit's symbol."""

__all__ = ["format_quantity"]

# Units shown with a symbol other than their own name.
_DISPLAY = {"C": "\\u00b0C", "F": "\\u00b0F", "R": "\\u00b0R"}


def _number(value: float, precision: int) -> str:
    """`value` with thousands grouped, rounded to `precision`, without trailing zeros."""
    text = f"{value:,.{precision}f}"
    if "." not in text:
        return text
    return text.rstrip("0").rstrip(".")


def _unit(unit: str) -> str:
    """How a unit is shown: temperatures in degrees with the degree sign, others as given.

    Kelvin is an absolute scale and has no degree sign.
    """
    return _DISPLAY.get(unit, unit)


def format_quantity(value: float, unit: str, *, precision: int = 2) -> str:
    """`value` rounded to `precision` decimals, trailing zeros dropped, then the unit.

    Thousands are grouped with commas, so large masses stay readable. Temperatures in degrees
    are shown with the degree sign.
    """
    return f"{_number(value, precision)} {_unit(unit)}"
'''

SAMPLE_PULL_REQUESTS: tuple[SamplePullRequest, ...] = (
    SamplePullRequest(
        number=1,
        title="Accept unit names and plurals when converting lengths",
        body=(
            "People write `kilometres` or `feet` rather than `km` or `ft`. Accept the full\n"
            "names, in British and American spelling, singular or plural, in any case.\n\n"
            "Fixes #11"
        ),
        kind="squash",
        branch="unit-names",
        files={"src/unitkit/length.py": _LENGTH_NAMES, "tests/test_length.py": _TEST_LENGTH_NAMES},
        tier="easy",
        drafts=True,
    ),
    SamplePullRequest(
        number=2,
        title="Document the supported units",
        body="A page listing every unit and its symbol.",
        kind="squash",
        branch="docs-units",
        files={
            "README.md": _README + "\nSee docs/units.md for every unit.\n",
            "docs/units.md": "# Units\n\n| symbol | unit |\n| --- | --- |\n| m | metre |\n",
        },
        tier=None,
        drafts=False,
    ),
    SamplePullRequest(
        number=3,
        title="Add mass units",
        body=(
            "Recipes and shipping labels mix grams, ounces and pounds. Add\n"
            "`convert_mass(value, source, target)` for metric and imperial masses (a negative\n"
            "mass is refused: the mass cannot be negative), `mass_units()` listing the units\n"
            "lightest first, and `total_mass(readings, unit)` adding up readings given in\n"
            "different units. Group thousands when formatting so `12345.678 g` reads\n"
            "`12,345.68 g`. See https://example.com/example/unitkit/issues/9 for the request."
        ),
        kind="merge",
        branch="mass-units",
        files={
            "src/unitkit/mass.py": _MASS,
            "src/unitkit/__init__.py": _INIT_MASS,
            "src/unitkit/formatting.py": _FORMATTING_MASS,
            "tests/conftest.py": _CONFTEST_MASS,
            "tests/test_mass.py": _TEST_MASS,
            "tests/test_formatting.py": _TEST_FORMATTING_MASS,
        },
        tier="medium",
        drafts=True,
    ),
    SamplePullRequest(
        number=4,
        title="Convert temperatures, and any two units by name",
        body=(
            "Temperatures differ by an offset as well as a factor, so they get their own\n"
            "module: `convert_temperature(value, source, target)` and `temperature_units()`\n"
            "(kelvin, Celsius, Fahrenheit, Rankine; nothing below absolute zero).\n"
            "A new `convert(value, source, target)` works for any dimension and refuses to\n"
            "mix dimensions; `dimension_of` names a unit's dimension. Degrees are formatted\n"
            "with the degree sign. Bumps the version to 0.2.0.\n\n"
            "The new tests are in tests/test_temperature.py and tests/test_convert.py."
        ),
        kind="merge",
        branch="temperature",
        files={
            "src/unitkit/temperature.py": _TEMPERATURE,
            "src/unitkit/convert.py": _CONVERT,
            "src/unitkit/__init__.py": _INIT_TEMPERATURE,
            "src/unitkit/formatting.py": _FORMATTING_TEMPERATURE,
            "pyproject.toml": _PYPROJECT.format(version="0.2.0"),
            "CHANGELOG.md": _CHANGELOG,
            "tests/test_temperature.py": _TEST_TEMPERATURE,
            "tests/test_convert.py": _TEST_CONVERT,
            "tests/test_formatting.py": _TEST_FORMATTING_TEMPERATURE,
        },
        tier="hard",
        drafts=True,
    ),
    SamplePullRequest(
        number=5,
        title="Compute each pair's length factor once",
        body="Cache unit lookups and conversion factors; behaviour is unchanged.",
        kind="squash",
        branch="length-cache",
        files={
            "src/unitkit/length.py": _LENGTH_FACTORS,
            "tests/test_length.py": _TEST_LENGTH_FACTORS,
        },
        tier="easy",
        drafts=False,
    ),
    SamplePullRequest(
        number=6,
        title="Split the formatting helper into number and unit parts",
        body="No behaviour change.",
        kind="squash",
        branch="tidy-formatting",
        files={"src/unitkit/formatting.py": _FORMATTING_TIDY},
        tier=None,
        drafts=False,
    ),
)


def _identity(who: tuple[str, str], when: int) -> dict[str, str]:
    name, email = who
    stamp = f"{when} +0000"
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
    }


def _write(repo: Path, files: dict[str, str | None]) -> None:
    for name, content in files.items():
        path = repo / name
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def _commit(repo: Path, message: str, files: dict[str, str | None], when: int) -> None:
    _write(repo, files)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", message, env=_identity(_AUTHOR, when))


def _land(repo: Path, pull: SamplePullRequest, when: int) -> None:
    """Land one pull request on main: squashed, or merged from its branch with --no-ff."""
    if pull.kind == "squash":
        message = f"{pull.title} (#{pull.number})\n\n{pull.body}"
        _commit(repo, message, pull.files, when)
        return
    git(repo, "checkout", "--quiet", "-b", pull.branch)
    _commit(repo, pull.title, pull.files, when)
    git(repo, "checkout", "--quiet", "main")
    subject = f"Merge pull request #{pull.number} from example/{pull.branch}"
    message = f"{subject}\n\n{pull.title}\n\n{pull.body}"
    merge = ("merge", "--quiet", "--no-ff", "--message", message, pull.branch)
    git(repo, *merge, env=_identity(_MERGER, when + 3600))


def build_sample_history(parent: Path) -> Path:
    """Create the `unitkit` repository under `parent` with its whole history; return its path.

    Raises:
        GitError: git failed.
        FileExistsError: `parent/unitkit` already exists.
    """
    repo = parent / "unitkit"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    _commit(repo, "Initial unitkit", BASE, _START)
    for day, pull in enumerate(SAMPLE_PULL_REQUESTS, start=1):
        _land(repo, pull, _START + day * _DAY)
    return repo
