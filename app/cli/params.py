"""Argument types the commands share.

``ROW_ID`` takes a row id (a judgment, an observation, a tombstone) and refuses
anything outside 1 to 2**53 - 1 as ``invalid_input`` before the store is
opened, so ``mama show 9223372036854775808`` is one clear line, not an
overflow inside the database driver.
"""

from __future__ import annotations

from typing import Any

import click

from mama_core.ids import MAX_ID, is_store_id


class RowIdType(click.ParamType):
    """A whole number from 1 to ``MAX_ID``; anything else is ``invalid_input``."""

    name = "id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value).strip(), 10)
            except ValueError:
                number = None
        if number is None or not is_store_id(number):
            from mama_core.errors import InvalidInputError

            name = param.human_readable_name if param is not None else "id"
            raise InvalidInputError(
                f"{name} must be a whole number from 1 to {MAX_ID}.",
                details={"fields": [name]},
            )
        return number


ROW_ID = RowIdType()
