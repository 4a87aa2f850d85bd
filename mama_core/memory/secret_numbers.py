"""Payment card numbers and IBANs, checked by their own check digits.

A number is only refused when it passes its scheme's validator from
``python-stdnum`` (maintained, LGPL-2.1+, pinned in pyproject): a card number
needs a card network's prefix and length and a valid Luhn digit, an IBAN a
known country format and a valid ISO 7064 mod 97-10 check. So an order number,
a tracking number or an IBAN with a typo in its check digits passes, while the
real thing does not.
"""

from __future__ import annotations

import re

from stdnum import iban, luhn
from stdnum.exceptions import ValidationError

_CARD_RUN = re.compile(
    r"(?<![\w.,/-])"
    r"(?:\d{13,19}|\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,4})?|\d{4}[ -]\d{6}[ -]\d{4,5})"
    r"(?![\w/-]|[.,]\d)"
)
"""Card groupings as printed: one run, fours (Visa, Mastercard, ...) or 4-6-5 (Amex)."""
_IBAN_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
_CARD_PREFIXES = re.compile(
    r"^(?:4\d{12}(?:\d{3}){0,2}"  # Visa
    r"|5[1-5]\d{14}|2(?:2[2-9]\d|[3-6]\d\d|7[01]\d|720)\d{12}"  # Mastercard
    r"|3[47]\d{13}"  # American Express
    r"|6(?:011|5\d\d|4[4-9]\d)\d{12,15}"  # Discover
    r"|35(?:2[89]|[3-8]\d)\d{12,15}"  # JCB
    r"|3(?:0[0-5]|[68]\d)\d{11,16}"  # Diners Club
    r"|62\d{14,17}"  # UnionPay
    r"|(?:5[06-8]|6\d)\d{10,17})$"  # Maestro
)


def card_number(text: str) -> bool:
    """Whether ``text`` holds a payment card number that passes its Luhn check."""
    for match in _CARD_RUN.finditer(text):
        digits = re.sub(r"[ -]", "", match.group())
        if _CARD_PREFIXES.match(digits) and luhn.is_valid(digits):
            return True
    return False


def bank_account(text: str) -> bool:
    """Whether ``text`` holds an IBAN with a valid check: its mod-97 check digits and its
    country's length and layout. Not the country's own bank directory (``check_country``):
    python-stdnum's lists of banks lag the real ones, and an IBAN at a bank it does not
    know is still someone's account number."""
    for match in _IBAN_RUN.finditer(text.upper()):
        candidate = match.group().rstrip()
        for end in range(len(candidate), 14, -1):  # the run may swallow a following word
            try:
                iban.validate(candidate[:end], check_country=False)
            except ValidationError:
                continue
            return True
    return False
