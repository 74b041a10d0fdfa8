"""The MigrationError hierarchy: one class per engine result code, carrying the engine's code,
message, JSON path, expression offset and individual problems.

Codes below 1000 are cdmigrate's own; the others are Core Data's NSCocoaErrorDomain codes
(134110 "migration", 1570 "missing mandatory property", ...), with the same meaning.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from . import _lib
from .values import ObjectID

OK = 0
INVALID_JSON = 1
INVALID_MODEL = 2
INVALID_MAPPING = 3
EXPRESSION_SYNTAX = 4
EXPRESSION_EVALUATION = 5
INVALID_ARGUMENT = 6
IO = 7
MISUSE = 101
NOTFOUND = 102
MISMATCH = 103
ENCODING = 104
VALIDATION_MULTIPLE_ERRORS = 1560
VALIDATION_MISSING_MANDATORY_PROPERTY = 1570
VALIDATION_RELATIONSHIP_LACKS_MINIMUM_COUNT = 1580
VALIDATION_RELATIONSHIP_EXCEEDS_MAXIMUM_COUNT = 1590
VALIDATION_NUMBER_TOO_LARGE = 1610
VALIDATION_NUMBER_TOO_SMALL = 1620
INCOMPATIBLE_VERSION_HASH = 134100
MIGRATION = 134110
MIGRATION_CANCELLED = 134120
MIGRATION_MISSING_SOURCE_MODEL = 134130
MIGRATION_MISSING_MAPPING_MODEL = 134140
MIGRATION_MANAGER_SOURCE_STORE = 134150
MIGRATION_MANAGER_DESTINATION_STORE = 134160
ENTITY_MIGRATION_POLICY = 134170
SQLITE = 134180
INFERRED_MAPPING_MODEL = 134190


# The library's I/O messages: "cannot open 'PATH': No such file or directory", "cannot rename 'A' to 'B': ...".
_IO_MESSAGE = re.compile(r"cannot \w+ '(?P<file>[^']*)'(?: to '(?P<file2>[^']*)')?(?:: (?P<reason>[^:]+))?$")
_ERRNOS: dict[str, int] = {}


def _errno_of(reason: str) -> int | None:
    """The errno whose strerror text is `reason` (the library's C library is the one Python uses)."""
    if not _ERRNOS:
        for number in range(1, 256):
            _ERRNOS.setdefault(os.strerror(number), number)
    return _ERRNOS.get(reason)


class Problem:
    """One individual problem of a model, a mapping or a destination's validation.

    For a validation error (1570–1620) it also says what failed, as Core Data's
    NSValidationObjectErrorKey and NSValidationKeyErrorKey do: ``entity``, ``object_id`` (an
    ObjectID of the destination instance: store ``"destination"``, entity, primary key), ``uri``
    (its object ID URI) and ``key`` (the attribute or relationship); None for other problems."""

    __slots__ = ("byte_offset", "code", "entity", "key", "message", "offset", "path", "primary_key", "uri")

    def __init__(
        self,
        code: int,
        message: str,
        path: str | None = None,
        offset: int | None = None,
        *,
        entity: str | None = None,
        uri: str | None = None,
        key: str | None = None,
        primary_key: int | None = None,
    ):
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
        self.byte_offset = offset
        self.entity = entity
        self.uri = uri
        self.key = key
        self.primary_key = primary_key

    @property
    def object_id(self) -> ObjectID | None:
        """The failing destination instance's ObjectID (None when the problem names none)."""
        if self.entity is None or self.primary_key is None:
            return None
        return ObjectID("destination", self.entity, self.primary_key)

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        if self.uri:
            where += f" ({self.entity}.{self.key} of {self.uri})"
        return f"Problem({self.code}, {self.message!r}{where})"


class MigrationError(Exception):
    """An error of the engine (or of its use).

    Attributes: ``code`` (the engine's result code), ``message``, ``path`` (where in a JSON document,
    ``"$.entities[2].attributes[0].type"``, or None), ``offset`` (where in the expression or predicate
    at fault, or None: an index into the ``str`` that holds it — ``expression[:error.offset]`` is the
    text before it — when the call was given that text, as ``evaluate``, ``fetch_*``/``count_*`` and
    ``from_json`` are; for a mapping's JSON, into the expression or predicate string at ``path``),
    ``byte_offset`` (the same place as the C API reports it: a zero-based UTF-8 byte offset, as
    sqlite3_error_offset's; equal to ``offset`` for ASCII text and for errors of a migration run,
    whose expressions come from a mapping read earlier), ``problems`` (the individual problems of a
    validation, each with its own ``offset`` and ``byte_offset``).
    """

    code: int = MIGRATION

    def __init__(
        self,
        message: str,
        code: int | None = None,
        *,
        path: str | None = None,
        offset: int | None = None,
        problems: list[Problem] | None = None,
    ):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.path = path
        self.offset = offset
        self.byte_offset = offset
        self.problems: list[Problem] = problems or []
        # What a single validation error is about (Problem's fields), when the library says.
        self._entity: str | None = None
        self._uri: str | None = None
        self._key: str | None = None
        self._primary_key: int | None = None

    @property
    def errors(self) -> list[Problem]:
        """The individual errors: for a validation that failed on several instances (1560,
        NSValidationMultipleErrorsError) one per instance and property, as Core Data's
        NSDetailedErrorsKey, each with ``code``, ``message``, ``entity``, ``object_id``, ``uri``
        and ``key``; for a single validation failure (1570–1620) the error itself as one
        Problem; otherwise ``problems``."""
        if self.problems or not 1560 <= self.code < 1700:
            return list(self.problems)
        problem = Problem(
            self.code,
            self.message,
            self.path,
            self.byte_offset,
            entity=self._entity,
            uri=self._uri,
            key=self._key,
            primary_key=self._primary_key,
        )
        problem.offset = self.offset
        return [problem]

    @property
    def code_name(self) -> str:
        """The engine's short English name of the code ("migration cancelled")."""
        name = _lib.lib.cdm_errstr(self.code)
        return name.decode("utf-8", "replace") if name else ""

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"


class InvalidJSONError(MigrationError, ValueError):
    """Text that is not well-formed JSON."""

    code = INVALID_JSON


class InvalidModelError(MigrationError, ValueError):
    """A data model that fails validation (see ``problems``)."""

    code = INVALID_MODEL


class InvalidMappingError(MigrationError, ValueError):
    """A mapping model that does not fit its models (see ``problems``)."""

    code = INVALID_MAPPING


class ExpressionSyntaxError(MigrationError, ValueError):
    """A value expression or predicate that does not parse (see ``offset``)."""

    code = EXPRESSION_SYNTAX


class ExpressionEvaluationError(MigrationError):
    """An expression that fails when evaluated."""

    code = EXPRESSION_EVALUATION


class InvalidArgumentError(MigrationError, ValueError):
    """A value the engine refuses (wrong entity for a relationship, ...)."""

    code = INVALID_ARGUMENT


class MigrationIOError(MigrationError, OSError):
    """A file that cannot be read or written. Also an OSError, so ``except OSError`` catches it,
    with OSError's ``errno``, ``strerror``, ``filename`` (and ``filename2`` for a rename) where the
    library names them (None otherwise)."""

    code = IO

    def __init__(self, message: str, code: int | None = None, **details: Any):
        super().__init__(message, code, **details)
        found = _IO_MESSAGE.search(message)
        if found:
            self.filename = found.group("file")
            self.filename2 = found.group("file2")
            reason = found.group("reason")
            if reason:
                self.strerror = reason
                self.errno = _errno_of(reason)


class MisuseError(MigrationError):
    """A closed object, an instance used after its callback returned, a call in the wrong state."""

    code = MISUSE


class NotFoundError(MigrationError, KeyError):
    """An unknown entity, attribute, relationship or mapping name. Also a KeyError, so that
    ``instance.get("unknown")`` answers None as a mapping does."""

    code = NOTFOUND


class MismatchError(MigrationError, TypeError):
    """A value of the wrong type for an attribute."""

    code = MISMATCH


class EncodingError(MigrationError, ValueError):
    """A string that is not valid UTF-8."""

    code = ENCODING


class ValidationError(MigrationError):
    """The destination failed Core Data's validation (1560–1620); see ``problems``."""

    code = VALIDATION_MULTIPLE_ERRORS


class IncompatibleVersionHashError(MigrationError):
    """The store's version hashes do not match the source model (134100)."""

    code = INCOMPATIBLE_VERSION_HASH


class MigrationCancelledError(MigrationError):
    """The progress callback returned False (134120)."""

    code = MIGRATION_CANCELLED


class MissingSourceModelError(MigrationError):
    """The store does not match the source model: no model for its version (134130)."""

    code = MIGRATION_MISSING_SOURCE_MODEL


class MissingMappingModelError(MigrationError):
    """No mapping model for a step: none given, or none between the two versions (134140)."""

    code = MIGRATION_MISSING_MAPPING_MODEL


class SourceStoreError(MigrationError):
    """The source store cannot be opened or read (134150)."""

    code = MIGRATION_MANAGER_SOURCE_STORE


class DestinationStoreError(MigrationError):
    """The destination cannot be made (it exists, it is the source, ...) (134160)."""

    code = MIGRATION_MANAGER_DESTINATION_STORE


class EntityMigrationPolicyError(MigrationError):
    """A policy or host function reported an error (134170)."""

    code = ENTITY_MIGRATION_POLICY


class SQLiteError(MigrationError):
    """SQLite refused a statement of the run or could not read a store; the message has its words."""

    code = SQLITE


class InferredMappingModelError(MigrationError):
    """Core Data cannot infer a mapping model between the two models (NSInferredMappingModelError):
    each problem names the entity, the property and the rule the change breaks."""

    code = INFERRED_MAPPING_MODEL


_CLASSES: dict[int, type[MigrationError]] = {
    INVALID_JSON: InvalidJSONError,
    INVALID_MODEL: InvalidModelError,
    INVALID_MAPPING: InvalidMappingError,
    EXPRESSION_SYNTAX: ExpressionSyntaxError,
    EXPRESSION_EVALUATION: ExpressionEvaluationError,
    INVALID_ARGUMENT: InvalidArgumentError,
    IO: MigrationIOError,
    MISUSE: MisuseError,
    NOTFOUND: NotFoundError,
    MISMATCH: MismatchError,
    ENCODING: EncodingError,
    INCOMPATIBLE_VERSION_HASH: IncompatibleVersionHashError,
    MIGRATION_CANCELLED: MigrationCancelledError,
    MIGRATION_MISSING_SOURCE_MODEL: MissingSourceModelError,
    MIGRATION_MISSING_MAPPING_MODEL: MissingMappingModelError,
    MIGRATION_MANAGER_SOURCE_STORE: SourceStoreError,
    MIGRATION_MANAGER_DESTINATION_STORE: DestinationStoreError,
    ENTITY_MIGRATION_POLICY: EntityMigrationPolicyError,
    SQLITE: SQLiteError,
    INFERRED_MAPPING_MODEL: InferredMappingModelError,
}
for _code in (
    VALIDATION_MULTIPLE_ERRORS,
    VALIDATION_MISSING_MANDATORY_PROPERTY,
    VALIDATION_RELATIONSHIP_LACKS_MINIMUM_COUNT,
    VALIDATION_RELATIONSHIP_EXCEEDS_MAXIMUM_COUNT,
    VALIDATION_NUMBER_TOO_LARGE,
    VALIDATION_NUMBER_TOO_SMALL,
):
    _CLASSES[_code] = ValidationError


def error_class(code: int) -> type[MigrationError]:
    """The exception class for an engine code (MigrationError for codes it does not know)."""
    return _CLASSES.get(code, MigrationError)


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", "replace") if raw else ""


def _optional_text(raw: bytes | None) -> str | None:
    return raw.decode("utf-8", "replace") if raw is not None else None


def _problem(pointer: int) -> Problem:
    lib = _lib.lib
    path = lib.cdm_error_path(pointer)
    offset = lib.cdm_error_offset(pointer)
    entity = _optional_text(lib.cdm_error_entity(pointer))
    return Problem(
        lib.cdm_error_code(pointer),
        _text(lib.cdm_error_message(pointer)),
        path.decode("utf-8", "replace") if path else None,
        offset if offset >= 0 else None,
        entity=entity,
        uri=_optional_text(lib.cdm_error_object_uri(pointer)),
        key=_optional_text(lib.cdm_error_key(pointer)),
        primary_key=lib.cdm_error_primary_key(pointer) if entity is not None else None,
    )


_RETAIN_HINT = "; call cdm_object_retain"
_PYTHON_HINT = (
    "; an Instance stays usable while Python references it, until instance.release() or the end of its "
    "migration run (a Store's until the store is closed)"
)


def from_record(code: int, pointer: int | None) -> MigrationError:
    """A MigrationError from a cdm_error (which the library owns; everything is copied at once)."""
    lib = _lib.lib
    if not pointer:
        return error_class(code)(_text(lib.cdm_errstr(code)) or f"error {code}", code)
    record_code = lib.cdm_error_code(pointer)
    if record_code != code and code != 0:
        # The record belongs to another call: keep the code we were given, say so plainly.
        return error_class(code)(_text(lib.cdm_errstr(code)) or f"error {code}", code)
    problem = _problem(pointer)
    problems = [_problem(lib.cdm_error_at(pointer, i)) for i in range(lib.cdm_error_count(pointer))]
    if record_code == MISUSE and _RETAIN_HINT in problem.message:
        # The binding retains every Instance it makes: tell Python users what applies to them.
        problem.message = problem.message[: problem.message.index(_RETAIN_HINT)] + _PYTHON_HINT
    error = error_class(record_code)(
        problem.message, record_code, path=problem.path, offset=problem.offset, problems=problems
    )
    error._entity, error._uri, error._key, error._primary_key = (
        problem.entity,
        problem.uri,
        problem.key,
        problem.primary_key,
    )
    return error


def last_error(code: int) -> MigrationError:
    """The calling thread's last error (every failed call lands there) as an exception."""
    return from_record(code, _lib.lib.cdm_last_error())


def str_index(text: str, byte_offset: int) -> int:
    """The index in ``text`` of the character that starts at UTF-8 byte ``byte_offset`` (as the
    binding encodes a str for C: ``c_text``)."""
    return len(text.encode("utf-8", "surrogatepass")[: max(byte_offset, 0)].decode("utf-8", "ignore"))


def _member(document: Any, path: str) -> Any:
    """The JSON value at an engine path (``$.entityMappings[0].attributeMappings.name``), or None.
    A key may hold dots: at each object the longest key that fits is taken."""
    if not path.startswith("$"):
        return None
    rest, value = path[1:], document
    while rest:
        if rest[0] == "[" and isinstance(value, list):
            end = rest.find("]")
            if end < 0 or not rest[1:end].isdigit() or int(rest[1:end]) >= len(value):
                return None
            value, rest = value[int(rest[1:end])], rest[end + 1 :]
        elif rest[0] == "." and isinstance(value, dict):
            fits = [k for k in value if rest[1:].startswith(k) and rest[1 + len(k) :][:1] in ("", ".", "[")]
            if not fits:
                return None
            key = max(fits, key=len)
            value, rest = value[key], rest[1 + len(key) :]
        else:
            return None
    return value


def located(error: MigrationError, text: str, json_document: bool = False) -> MigrationError:
    """``error`` (changed in place) with each offset turned into an index into the str the caller
    gave: ``text`` itself (an expression or predicate), or, when ``json_document``, the string
    value its ``path`` names in that JSON. The C API's byte offset stays in ``byte_offset``; an
    offset whose text cannot be found stays a byte offset."""
    document: Any = None
    if json_document and (error.byte_offset is not None or any(p.byte_offset is not None for p in error.problems)):
        try:
            document = json.loads(text)
        except ValueError:
            return error

    def index(path: str | None, byte_offset: int | None) -> int | None:
        if byte_offset is None:
            return None
        holder = _member(document, path or "") if json_document else text
        return str_index(holder, byte_offset) if isinstance(holder, str) else byte_offset

    error.offset = index(error.path, error.byte_offset)
    for problem in error.problems:
        problem.offset = index(problem.path, problem.byte_offset)
    return error


def check(code: int) -> None:
    """Raises the thread's last error when a C call returned a non-zero code."""
    if code:
        raise last_error(code)


class MigrationWarning(UserWarning):
    """A warning of a migration run (a loss the mapping does not declare, a destination property
    no mapping fills, passes whose order matters, missing external data files, …): each line of a
    report's ``warnings`` (a staged run's prefixed with its step, ``"v1 → v2: …"``) is also given
    through Python's ``warnings`` module with this category, once per run, so that
    ``warnings.simplefilter("error", cdmigrate.MigrationWarning)`` turns them into errors and
    ``logging.captureWarnings(True)`` sends them to logging."""
