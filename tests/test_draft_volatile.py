"""`selfbench.draft.volatile`: test ids that differ only by a timestamp, an address or a random
suffix are matched as one test; ids that differ otherwise never are."""

from __future__ import annotations

import datetime as dt
from operator import methodcaller

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from selfbench.draft.volatile import MARKER, is_volatile, match_key

# Text that can hold no volatile part: no digit, no hexadecimal letter, no marker.
_STABLE = st.text(alphabet="ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ_[]()<>-/.:=, ", max_size=10)
# What may stand beside a volatile part (anything but a letter or a digit).
_BESIDE = st.sampled_from(["[", "]", "-", "_", "/", " ", "=", "(", ")", ":", ",", "<", ">"])
_YEAR_1000 = dt.datetime(1000, 1, 1)  # noqa: DTZ001 - naive on purpose: an id's local time
_TIMESTAMPS = st.one_of(
    st.datetimes(min_value=_YEAR_1000).map(dt.datetime.isoformat),
    st.datetimes(min_value=_YEAR_1000, timezones=st.just(dt.UTC)).map(str),
    *(
        st.datetimes(min_value=_YEAR_1000).map(methodcaller("strftime", form))
        for form in (
            "%m-%d-%Y %H:%M:%S",  # marshmallow's `dt.datetime.now().strftime(...)` ids
            "%H:%M:%S %Y-%m-%d",  # and its other one
            "%d.%m.%Y %H:%M",
            "%d/%m/%YT%H:%M:%S",
            "%Y/%m/%d %H:%M:%S",
        )
    ),
    st.integers(10**9, 10**19).map(str),
    st.tuples(st.integers(10**9, 10**12), st.integers(0, 10**6)).map(lambda t: f"{t[0]}.{t[1]}"),
)
_RANDOM_HEX = (
    st.binary(min_size=4, max_size=16)
    .map(bytes.hex)
    .filter(lambda text: any(c.isdigit() for c in text) and any(c.isalpha() for c in text))
)
_VOLATILE = st.one_of(
    _TIMESTAMPS,
    st.uuids().map(str),
    st.integers(0x1000, 2**64).map(hex),
    _RANDOM_HEX,
    _RANDOM_HEX.map(str.upper),
)


@st.composite
def _ids(draw: st.DrawFn) -> tuple[list[str], list[tuple[str, str]], int]:
    """The stable text of an id, what stands around each of its volatile parts, and how many
    there are: `stable[0] before[0] <volatile> after[0] stable[1] ...`."""
    count = draw(st.integers(1, 3))
    stable = draw(st.lists(_STABLE, min_size=count + 1, max_size=count + 1))
    around = draw(st.lists(st.tuples(_BESIDE, _BESIDE), min_size=count, max_size=count))
    return stable, around, count


def _join(stable: list[str], around: list[tuple[str, str]], volatile: list[str]) -> str:
    parts = [stable[0]]
    for (before, after), value, text in zip(around, volatile, stable[1:], strict=True):
        parts.extend((before, value, after, text))
    return "".join(parts)


@given(_ids(), st.data())
def test_ids_differing_only_in_volatile_parts_have_one_key(
    shape: tuple[list[str], list[tuple[str, str]], int], data: st.DataObject
) -> None:
    stable, around, count = shape
    first = data.draw(st.lists(_VOLATILE, min_size=count, max_size=count))
    second = data.draw(st.lists(_VOLATILE, min_size=count, max_size=count))
    one, other = _join(stable, around, first), _join(stable, around, second)
    assert is_volatile(one)
    assert match_key(one) == match_key(other)


@given(_ids(), st.lists(_STABLE, min_size=4, max_size=4), st.data())
def test_ids_differing_otherwise_never_share_a_key(
    shape: tuple[list[str], list[tuple[str, str]], int], other: list[str], data: st.DataObject
) -> None:
    stable, around, count = shape
    changed = other[: count + 1]
    volatile = data.draw(st.lists(_VOLATILE, min_size=count, max_size=count))
    again = data.draw(st.lists(_VOLATILE, min_size=count, max_size=count))
    assume(changed != stable)
    assert match_key(_join(stable, around, volatile)) != match_key(_join(changed, around, again))


@given(st.text().filter(lambda text: MARKER not in text))
def test_an_id_with_no_volatile_part_is_its_own_key(name: str) -> None:
    assert (match_key(name) == name) is not is_volatile(name)
    assert match_key(match_key(name)) == match_key(name)


UUIDS = ("0b5d6a1e-9c2f-4e8b-a3d7-1f2e3c4b5a69", "f47ac10b-58cc-4372-a567-0e02b2c3d479")


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        ("test_x[2026-12-06T07:33:01.123456]", "test_x[2026-12-06T08:00:00]", True),
        ("test_x[2026-12-06 07:33:01+00:00]", "test_x[2027-01-01 00:00:00Z]", True),
        ("test_t[1733470381.123]", "test_t[1733470399.5]", True),
        ("test_dt[12-06-2026 16:48:07]", "test_dt[12-06-2026 16:50:13]", True),
        ("test_dt[6.12.2026 9:05]", "test_dt[06.12.2026 16:50]", True),
        ("test_dt[12-06-2026 16:48:07]", "test_dt[12/06/2026 16:48:07]", True),
        ("test_dt[17:02:30 2026-12-06]", "test_dt[17:06:11 2026-12-06]", True),
        ("test_t[17:02:30]", "test_t[17:06:11]", False),  # a time alone is a parameter
        ("test_d[12-06-2026]", "test_d[12-07-2026]", False),  # a date alone is a parameter
        ("test_d[12-06/2026 16:48]", "test_d[12-06/2026 16:49]", False),  # mixed separators
        ("test_y[<object at 0x7f3a9c1b2d40>]", "test_y[<object at 0x7f3a9c1b9e10>]", True),
        (f"test_u[{UUIDS[0]}]", f"test_u[{UUIDS[1]}]", True),
        ("test_tmp[tmp-3f2a9c1b]", "test_tmp[tmp-a81b22c0]", True),
        ("test_x[1]", "test_x[2]", False),
        ("test_d[2020-01-01]", "test_d[2020-01-02]", False),  # a date alone is a parameter
        ("test_n[12345678]", "test_n[12345679]", False),  # too short for a timestamp
        ("test_w[deadbeef]", "test_w[deadbeee]", False),  # a word, not a random suffix
        ("test_x[2026-12-06T07:33:01]", "test_y[2026-12-06T07:33:01]", False),
        ("test_a[0x1]", "test_a[0x2]", False),  # too short for an address
        ("test_v3f2a9c1b", "test_v3f2a9c1c", False),  # not a word of its own
    ],
)  # fmt: skip
def test_matching_keys(one: str, other: str, same: bool) -> None:
    assert (match_key(one) == match_key(other)) is same
