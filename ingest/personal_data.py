"""Personal data a member_id must not be (spec 2, TradeRecord; decision 0040): an e-mail address, a
phone number written as one, a national personal ID of the store's country in its usual written form.

Only what is unambiguous is recognised. The specification allows "a salted hash or sequence number",
so a bare digit string is never a phone number or (but for one ID, below) a national ID here: it is a
sequence number, though it may also read as a phone number (`may_be_phone_number`, a warning).
"""

from __future__ import annotations

import functools
import importlib
import re
from types import ModuleType

import phonenumbers
from phonenumbers import Leniency, PhoneNumberFormat

# A simple, robust shape of local@domain.tld: the top-level domain holds letters only.
EMAIL = re.compile(r"[^@\s]+@(?:[^@\s.]+\.)+[^\W\d_]{2,}")
# Digits and the punctuation people write phone numbers with; a leading + for the international form.
# \d, not [0-9]: digits typed in another script (full-width "０９１２...") are still the same number.
_PHONE_SHAPE = re.compile(r"\+?[\d ().\-/]+")
_TEL_URI = re.compile(r"tel:", re.IGNORECASE)
_BARE_DIGITS = re.compile(r"\d+")
_DIGIT_GROUPS = re.compile(r"\d+")
_ALNUM_GROUPS = re.compile(r"[^\W_]+")


def is_email_address(value: str) -> bool:
    return EMAIL.fullmatch(value.strip()) is not None


# --- phone numbers --------------------------------------------------------------------------------


def is_written_phone_number(value: str, country_code: str | None) -> bool:
    """Whether value is a phone number written as one: with a leading + (valid for any country), with
    `tel:`, or with the punctuation and grouping of a phone number of country_code (valid there).

    Grouping is phonenumbers' own test (STRICT_GROUPING: "650 253 0000" and "650 2530000" are grouped
    like a US number, "65 02 53 00 00" is not) or the groups phonenumbers formats the number with.
    Values with letters are never phone numbers here (phonenumbers would read them as a keypad).
    """
    text = value.strip()
    tel_uri = _TEL_URI.match(text) is not None
    if tel_uri:
        text = text[4:]
    if not _PHONE_SHAPE.fullmatch(text):
        return False
    if text.startswith("+"):
        return _valid_number(text, None) is not None
    if country_code is None or (not tel_uri and _BARE_DIGITS.fullmatch(text)):
        return False
    number = _valid_number(text, country_code)
    return number is not None and (tel_uri or _grouped_as_phone(text, number, country_code))


def may_be_phone_number(value: str, country_code: str | None) -> bool:
    """Whether value is a bare digit string that is also a valid phone number of country_code, with the
    digits people dial in that country: the national format's ("0301234567" in DE, "2125550100" in
    the US), not a national number without its trunk prefix ("301234567" in DE), which phonenumbers
    also reads as valid but nobody writes (it would put the warning on 81 % of DE sequence numbers).
    """
    text = value.strip()
    # before the conversion: a digit of any script is still a digit after it, and nothing else is
    if country_code is None or not text.isdigit():
        return False
    text = _ascii_digits(text)
    number = _valid_number(text, country_code)
    if number is None:
        return False
    national = re.sub(r"\D", "", phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL))
    return text == national or (
        text == phonenumbers.national_significant_number(number) and not _trunk_prefix(country_code)
    )


def _trunk_prefix(country_code: str) -> str | None:
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(country_code)
    return metadata.national_prefix if metadata is not None else None


def _ascii_digits(text: str) -> str:
    return "".join(str(int(char)) if char.isdecimal() else char for char in text)


def _valid_number(text: str, country_code: str | None) -> phonenumbers.PhoneNumber | None:
    try:
        number = phonenumbers.parse(text, country_code)
    except phonenumbers.NumberParseException:
        return None
    return number if phonenumbers.is_valid_number(number) else None


def _grouped_as_phone(text: str, number: phonenumbers.PhoneNumber, country_code: str) -> bool:
    if any(
        match.start == 0 and match.end == len(text)
        for match in phonenumbers.PhoneNumberMatcher(text, country_code, leniency=Leniency.STRICT_GROUPING)
    ):
        return True
    # The matcher refuses a few of the library's own national formats ("011 15-2345-6789" in AR).
    groups = _group_lengths(text, _DIGIT_GROUPS)
    return groups == _group_lengths(phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL), _DIGIT_GROUPS)


def _group_lengths(text: str, groups: re.Pattern[str]) -> tuple[int, ...]:
    return tuple(len(group) for group in groups.findall(text))


# --- national personal IDs ------------------------------------------------------------------------

# python-stdnum modules of personal IDs, by the store's country (ISO 3166-1 alpha-2). Chosen: IDs of
# persons (not companies) whose usual written form is unambiguous: it carries letters, or punctuation
# in a fixed grouping (stdnum's `format`), so that a sequence number does not take it by chance. IDs
# written as bare digits only are left out (PL PESEL, TR T.C. Kimlik, RO CNP, GR AMKA, ID NIK, EE, LT,
# BG): a bare digit string is a sequence number. The exception is CN's resident ID (below).
# stdnum has no module for TW, HK, SG or GB's National Insurance number: those are not recognised.
NATIONAL_IDS: dict[str, tuple[str, ...]] = {
    "AR": ("ar.dni",),
    "AU": ("au.tfn",),
    "BE": ("be.nn",),
    "BR": ("br.cpf",),
    "CA": ("ca.sin",),
    "CH": ("ch.ssn",),
    "CL": ("cl.rut",),
    "CN": ("cn.ric",),
    "CZ": ("cz.rc",),
    "DE": ("de.idnr",),
    "DK": ("dk.cpr",),
    "ES": ("es.dni", "es.nie"),
    "FI": ("fi.hetu",),
    "FR": ("fr.nir",),
    "GB": ("gb.nhs",),
    "IE": ("ie.pps",),
    "IN": ("in_.aadhaar", "in_.pan"),
    "IT": ("it.codicefiscale",),
    "JP": ("jp.in_",),
    "KR": ("kr.rrn",),
    "MX": ("mx.curp",),
    "MY": ("my.nric",),
    "NL": ("nl.bsn",),
    "NO": ("no.fodselsnummer",),
    "PK": ("pk.cnic",),
    "PT": ("pt.cc",),
    "SE": ("se.personnummer",),
    "SK": ("sk.rc",),
    "TH": ("th.pin",),
    "US": ("us.ssn", "us.itin"),
    "ZA": ("za.idnr",),
}
# IDs whose usual written form is a bare digit string that no sequence number takes by chance: CN's
# resident ID has 18 digits holding a registered place code, a birth date and a check digit (one random
# 18-digit string in 100,000 passes, decision 0040; sequence numbers have far fewer digits).
BARE_DIGIT_IDS = frozenset({"cn.ric"})


# The fewest letters and digits a valid ID of each module holds: its length check in stdnum, without the
# separators its compact form drops. A member_id with fewer ("M-767055": 7; a US SSN has 9) is not handed
# to stdnum, whose clean step was nine tenths of the member_id check. Counted in the value upper-cased, as
# stdnum's compact forms are ("ß" is "SS"); stdnum maps no other character to a letter or a digit. A module
# not listed is always asked (nl.bsn pads short numbers with zeros; pt.cc has no fixed length).
# tests/unit/test_national_id_shapes.py checks each bound against the module's own valid examples.
FEWEST_LETTERS_AND_DIGITS: dict[str, int] = {
    "ar.dni": 7,
    "au.tfn": 8,
    "be.nn": 11,
    "br.cpf": 11,
    "ca.sin": 9,
    "ch.ssn": 13,
    "cl.rut": 8,
    "cn.ric": 18,
    "cz.rc": 9,
    "de.idnr": 11,
    "dk.cpr": 10,
    "es.dni": 9,
    "es.nie": 9,
    "fi.hetu": 10,  # 11 characters, one of them the century sign (- or +, or a letter)
    "fr.nir": 15,
    "gb.nhs": 10,
    "ie.pps": 8,
    "in_.aadhaar": 12,
    "in_.pan": 10,
    "it.codicefiscale": 11,
    "jp.in_": 12,
    "kr.rrn": 13,
    "mx.curp": 18,
    "my.nric": 12,
    "no.fodselsnummer": 11,
    "pk.cnic": 13,
    "se.personnummer": 10,  # 10 or 12 digits, and a - or + before the last four
    "sk.rc": 9,
    "th.pin": 13,
    "us.ssn": 9,
    "us.itin": 9,
    "za.idnr": 13,
}


def is_national_id(value: str, country_code: str | None) -> bool:
    """Whether value is a national personal ID of country_code written in its usual form."""
    names = NATIONAL_IDS.get(country_code or "", ())
    if not names:  # a country whose IDs are not checked: nothing to count
        return False
    text = value.strip()
    count = letters_and_digits(text)
    return any(_written_as(text, name) for name in names if count >= FEWEST_LETTERS_AND_DIGITS.get(name, 0))


def letters_and_digits(text: str) -> int:
    return sum(map(str.isalnum, text.upper()))


def _written_as(text: str, module_name: str) -> bool:
    module = _stdnum(module_name)
    if not _valid_id(module, text):
        return False
    if _BARE_DIGITS.fullmatch(text):
        return module_name in BARE_DIGIT_IDS
    if any(char.isalpha() for char in text):
        return True
    try:
        written = module.format(text) if hasattr(module, "format") else module.compact(text)
    except Exception:  # pt.cc's format raises IndexError for the 3-character values its check lets pass
        return False
    return _group_lengths(text, _ALNUM_GROUPS) == _group_lengths(written, _ALNUM_GROUPS)


def _valid_id(module: ModuleType, text: str) -> bool:
    # is_valid catches its own ValidationError, but a few checks raise on odd input (cn.ric: KeyError
    # for a place code without a county); such a value is not that ID, and must not become a 500.
    try:
        return bool(module.is_valid(text))  # stdnum is untyped
    except Exception:
        return False


@functools.cache
def _stdnum(module_name: str) -> ModuleType:
    return importlib.import_module(f"stdnum.{module_name}")
