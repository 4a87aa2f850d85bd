"""The team store's errors: each a ``MamaError`` with a code a program switches on."""

from __future__ import annotations

from mama_core.errors import MamaError


class TeamError(MamaError):
    code = "team_error"
    exit_code = 62


class TeamUnreachableError(TeamError):
    """The team's PostgreSQL cannot be reached: team reads say so, team writes are refused
    (never queued)."""

    code = "team_unreachable"
    exit_code = 63


class CredentialsRefusedError(TeamUnreachableError):
    """The server answered but refused the member's role or password (a wrong join
    string, or a role the admin dropped): as unreachable for reads and writes."""

    code = "team_credentials_refused"
    exit_code = 71


class NotJoinedError(TeamError):
    code = "team_not_joined"
    exit_code = 64


class ForeignDatabaseError(TeamError):
    """``team init`` on a database that holds other tables, or another format's schema."""

    code = "team_database_not_ours"
    exit_code = 65


class ScopeNotGrantedError(TeamError):
    """A write to a team scope the member's role was not granted (row-level security)."""

    code = "team_scope_not_granted"
    exit_code = 66


class TeamInputError(TeamError):
    code = "team_invalid_input"
    exit_code = 67


class TeamKeyringError(TeamError):
    code = "team_keyring_unavailable"
    exit_code = 68


class TeamModelMismatchError(TeamError):
    """The member's embedding model is not the one the team store's vectors are from."""

    code = "team_model_mismatch"
    exit_code = 69


class TeamClientMissingError(TeamError):
    """psycopg cannot load libpq (a bundle on a machine without GnuTLS, or psycopg installed
    without its binary build and no system libpq): team commands only; personal ones work."""

    code = "team_client_missing"
    exit_code = 74


class TeamChainBrokenError(TeamError):
    code = "team_chain_broken"
    exit_code = 72


class TeamMemoryNotFoundError(TeamError):
    """No team memory of that id in the scopes the role can read."""

    code = "team_memory_not_found"
    exit_code = 73


class TeamBusyError(TeamError):
    """A save or retire waited too long for the chain head another session holds."""

    code = "team_busy"
    exit_code = 75
