"""The shape test before the national ID check (ingest/personal_data.py, `FEWEST_LETTERS_AND_DIGITS`): a
member_id with fewer letters and digits than a module's bound is not handed to that module, so a bound
one too high would let that country's IDs through. Each bound is checked against every valid example of
the module's own documentation (in its usual written form, and stdnum's `format` of it), and against the
shortest IDs the modules with a length range accept."""

from __future__ import annotations

import ast
import doctest
import importlib

import pytest

from ingest.personal_data import FEWEST_LETTERS_AND_DIGITS, NATIONAL_IDS, is_national_id, letters_and_digits

MODULES = sorted({name for names in NATIONAL_IDS.values() for name in names})
# The shortest forms of the modules whose length has a range (found by trying numbers with stdnum).
SHORTEST = {
    "ar.dni": "1234567",
    "au.tfn": "12345679",
    "cl.rut": "1234567-4",
    "cz.rc": "520101/000",
    "sk.rc": "520101/000",
    "it.codicefiscale": "00743110108",  # 11 digits: a company's code
    "se.personnummer": "880320-0008",
    "ie.pps": "6433400J",
    "fi.hetu": "131052-300J",
}


def documented_valid_ids(module_name: str) -> list[str]:
    """The string arguments of the calls in the module's doctests that the module finds valid."""
    module = importlib.import_module(f"stdnum.{module_name}")
    found = []
    for example in doctest.DocTestParser().get_examples(module.__doc__ or ""):
        try:
            call = ast.parse(example.source.strip(), mode="eval").body
        except SyntaxError:  # a statement (an import), not a call
            continue
        if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
            value = call.args[0].value
            if isinstance(value, str) and _valid(module, value):
                found.append(value)
    return found


def _valid(module, value: str) -> bool:
    try:
        return module.is_valid(value)
    except Exception:  # a few checks raise on odd input (personal_data._valid_id)
        return False


def written_forms(module_name: str, value: str) -> list[str]:
    module = importlib.import_module(f"stdnum.{module_name}")
    return [value, module.format(value)] if hasattr(module, "format") else [value]


@pytest.mark.parametrize("module_name", MODULES)
def test_every_valid_example_of_a_module_reaches_its_check(module_name):
    examples = documented_valid_ids(module_name) + ([SHORTEST[module_name]] if module_name in SHORTEST else [])
    assert examples, module_name  # every module documents at least one valid ID
    bound = FEWEST_LETTERS_AND_DIGITS.get(module_name, 0)
    for example in examples:
        for written in written_forms(module_name, example):
            assert importlib.import_module(f"stdnum.{module_name}").is_valid(written)
            assert letters_and_digits(written.strip()) >= bound, (module_name, written)


def test_every_bound_is_of_a_module_in_use():
    assert set(FEWEST_LETTERS_AND_DIGITS) <= set(MODULES)


# it.codicefiscale's 11-digit form is bare digits: a sequence number here, not refused by design
@pytest.mark.parametrize("module_name", sorted(set(SHORTEST) - {"it.codicefiscale"}))
def test_the_shortest_ids_written_as_stdnum_formats_them_are_refused(module_name):
    country = next(code for code, names in NATIONAL_IDS.items() if module_name in names)
    assert is_national_id(written_forms(module_name, SHORTEST[module_name])[-1], country)


def test_letters_and_digits_are_counted_upper_cased_as_stdnum_compacts_them():
    assert letters_and_digits("ß-1") == 3  # "SS-1": stdnum reads the sharp s as two letters
    assert letters_and_digits("M-767055") == 7  # fewer than a US SSN's or ITIN's 9: not handed to stdnum
    assert not is_national_id("M-767055", "US")


def test_a_value_the_library_cannot_format_is_not_an_id():
    # stdnum's pt.cc finds "54 7" valid, then its format fails on it (IndexError): a 500 for a member_id
    # of a Portuguese store, found by comparing the check before and after the shape test on 65,000 values
    assert not is_national_id("54 7", "PT")
