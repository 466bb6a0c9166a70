"""Light frozen records for the classes the report path builds (Spec, Options, Leaf, ...).

A record is written like a frozen dataclass -- fields as class annotations, defaults as class
attributes, ``default_factory(...)`` for a fresh mutable default -- and gets ``__init__``
(keywords or positions), ``__eq__``, ``__hash__``, ``__repr__``, pickling and immutability.
Unlike :mod:`dataclasses` it builds no code with ``exec`` and does not import ``inspect``:
building a dataclass costs about a millisecond per class and importing the module about 7 ms,
a large share of a quick ``symcalc report``. :func:`fields`, :func:`replace` and
:func:`asdict` mirror their dataclasses namesakes (``asdict`` is shallow).
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Callable

MISSING = object()


class Field:
    __slots__ = ("name", "default", "factory")

    def __init__(self, name: str, default: Any = MISSING, factory: Any = None):
        self.name, self.default, self.factory = name, default, factory

    def __repr__(self) -> str:
        return f"Field({self.name!r})"


class default_factory:  # noqa: N801 -- used like dataclasses.field(default_factory=...)
    """A default built afresh for each record: ``sizes: dict = default_factory(dict)``."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]):
        self.make = make


class RecordMeta(type):
    def __new__(mcls, name, bases, ns, **kw):
        inherited = [f for b in bases for f in getattr(b, "__record_fields__", ())]
        own = []
        for fname, note in ns.get("__annotations__", {}).items():
            if isinstance(note, str) and note.startswith("ClassVar"):
                continue
            value = ns.pop(fname, MISSING)
            if isinstance(value, default_factory):
                own.append(Field(fname, MISSING, value.make))
            else:
                own.append(Field(fname, value))
        all_fields = tuple(f for f in inherited if f.name not in {o.name for o in own}) + tuple(own)
        ns["__slots__"] = tuple(f.name for f in own)
        ns["__record_fields__"] = all_fields
        ns["__match_args__"] = tuple(f.name for f in all_fields)
        return super().__new__(mcls, name, bases, ns, **kw)


class Record(metaclass=RecordMeta):
    """Base class of a record (see the module docstring)."""

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any):
        fields_ = self.__record_fields__
        if len(args) > len(fields_):
            raise TypeError(f"{type(self).__name__}() takes {len(fields_)} positional arguments")
        setter = object.__setattr__
        for f, value in zip(fields_, args):
            if f.name in kwargs:
                raise TypeError(f"{type(self).__name__}() got two values for {f.name!r}")
            setter(self, f.name, value)
        for f in fields_[len(args):]:
            if f.name in kwargs:
                setter(self, f.name, kwargs.pop(f.name))
            elif f.factory is not None:
                setter(self, f.name, f.factory())
            elif f.default is not MISSING:
                setter(self, f.name, f.default)
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {f.name!r}")
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got an unexpected argument "
                            f"{next(iter(kwargs))!r}")
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def _values(self) -> tuple:
        return tuple(getattr(self, f.name) for f in self.__record_fields__)

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((self.__class__.__name__, self._values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__record_fields__)
        return f"{type(self).__name__}({inner})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is frozen")

    def __reduce__(self):
        return (_rebuild, (self.__class__, self._values()))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _rebuild(cls, values):
    return cls(*values)


def fields(record: Any) -> tuple[Any, ...]:
    """The fields of a record class or instance, in order (of a dataclass: its fields)."""
    if not hasattr(record, "__record_fields__"):
        import dataclasses

        return dataclasses.fields(record)
    return record.__record_fields__


def replace(record: Any, **changes: Any) -> Any:
    """A copy of ``record`` (or of a dataclass instance) with some fields changed."""
    if not hasattr(record, "__record_fields__"):
        import dataclasses

        return dataclasses.replace(record, **changes)
    values = {f.name: getattr(record, f.name) for f in record.__record_fields__}
    values.update(changes)
    return record.__class__(**values)


def asdict(record: Any) -> dict[str, Any]:
    """Field name -> value (shallow: nested values are not copied)."""
    return {f.name: getattr(record, f.name) for f in record.__record_fields__}
