"""The typed request of every served call, declared once: HTTP and MCP validate through these models.

Each model is strict (JSON types as JSON Schema reads them: a boolean is not an integer, a string is
not a number), bounded (the declared ranges of `validate`) and closed (an unknown key is refused).
A method's `params` and a lane's parameters are models built from the method declarations
(`sidelight.methods` `Param`s) and the lane registry, so what `GET /api/methods` lists is what is
checked. `parse` turns the first problem into one `ApiError` (stable code, one-line message) that
HTTP answers as a 4xx and MCP as a tool error; `openapi` and the MCP tool schemas are generated
from the same models. Only a GET query string, which is text by nature, is read into the declared
types first (`from_query`), then validated by the same model.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any, Literal, Optional, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema

from ..index.lookup import PARTS_OF_SPEECH, PRIOR
from ..index.passages import MAX_SNIPPET_CHARS, SNIPPET_CHARS
from ..index.reading import MAX_PAGE_CHARS, PAGE_CHARS
from ..lanes import budget as B
from ..lanes.registry import lanes
from ..methods import method_spec, method_specs
from ..methods.params import Param
from .validate import (
    DEFAULT_DIAL,
    MAX_DIAL,
    MAX_EDGES,
    MAX_ID_CHARS,
    MAX_K,
    MAX_LIMIT,
    MAX_NOTE_CHARS,
    MAX_QUERY_CHARS,
    FALSE_WORDS,
    MAX_WHO_CHARS,
    TRUE_WORDS,
    ApiError,
)

STRICT = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


def _int(lo: int, hi: int, desc: str = "") -> Any:
    return Annotated[int, Field(ge=lo, le=hi, description=desc or None)]


Query = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS), Field(description="the query")]
TraceId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$"),
                    Field(description="the 32-hex-digit trace id a lane returned")]
NodeId = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS), Field(description="a record id")]
Budget = Annotated[int, Field(ge=B.MIN_BUDGET_MS, le=B.MAX_BUDGET_MS, description=(
    f"time budget for the call in ms (default {B.DEFAULT_BUDGET_MS}); stages that do not fit are skipped or cut "
    "and labelled"))]
K = Annotated[int, Field(ge=1, le=MAX_K, description="how many hits")]
Snippet = Annotated[int, Field(ge=0, le=MAX_SNIPPET_CHARS, description="each hit's snippet bound in characters "
                                                                       "(0: no passages)")]
Filter = Annotated[dict[str, str], Field(description="only records whose metadata KEY equals VALUE, e.g. "
                                                     "{\"pos\": \"noun\"}")]


class Schema(GenerateJsonSchema):
    """JSON schemas without generated titles, and without a null default on a field that cannot be null
    (an absent field there means the server's default, e.g. budget_ms)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: Any) -> Any:
        out = super().default_schema(schema)
        if out.get("default", 0) is None and "null" not in str(out):
            out.pop("default")
        return out


@lru_cache(maxsize=256)
def json_schema(model: type[BaseModel]) -> dict:
    """The model's JSON schema (its nested models under $defs); cached: do not change the answer."""
    return model.model_json_schema(schema_generator=Schema)


class Request(BaseModel):
    """A strict, closed request."""

    model_config = STRICT


# ---- method and lane parameters, from their declarations --------------------------------------------------

def param_type(p: Param) -> Any:
    """The pydantic type of one declared parameter: its kind, range or choices, null when nullable."""
    if p.choices is not None:
        t: Any = Literal[p.choices]
    elif p.kind is tuple:
        t = list[Annotated[float, Field(ge=p.low, le=p.high)]]
    elif p.kind in (int, float):
        t = Annotated[p.kind, Field(ge=p.low, le=p.high)]
    else:
        t = p.kind
    return Optional[t] if p.nullable else t


def params_model(params: tuple[Param, ...], name: str) -> type[BaseModel]:
    """A closed model of declared parameters (each optional: an absent one keeps its default)."""
    fields = {p.name: (param_type(p), Field(default=p.default, description=p.doc)) for p in params}
    return create_model(name, __config__=STRICT, **fields)  # type: ignore[call-overload]


@lru_cache(maxsize=None)
def method_params(method: str) -> type[BaseModel]:
    """The model of a registered method's `params`."""
    return params_model(method_spec(method).params, "Params_" + "".join(c if c.isalnum() else "_" for c in method))


def _lane_params(lane_name: str) -> type[BaseModel] | None:
    """A lane's parameters: those of the method of its name (the relation lane takes the `relation`
    method's); None for a lane that takes none."""
    names = {s.name: s for s in method_specs()}
    return method_params(lane_name) if lane_name in names and names[lane_name].params else None


# ---- the requests ---------------------------------------------------------------------------------------

class SearchRequest(Request):
    query: Query
    method: str = Field("bm25", description="a method of GET /api/methods")
    k: K = 10
    budget_ms: Budget = None  # type: ignore[assignment]
    params: dict[str, Any] = Field(None, description="the method's declared parameters (GET /api/methods)")  # type: ignore[arg-type]
    filter: Filter = None  # type: ignore[assignment]
    snippet_chars: Snippet = SNIPPET_CHARS


class LookupRequest(Request):
    query: Query
    k: K = 10
    method: Optional[str] = Field(None, description="a method (default: the index's lookup method)")
    pos: Optional[Literal[tuple(PARTS_OF_SPEECH)]] = None  # type: ignore[valid-type]
    prior: param_type(PRIOR) = Field(None, description=PRIOR.doc)  # type: ignore[valid-type]


def channels_request() -> type[BaseModel]:
    """The channels request of the registered lanes: an optional lane (dense) can be left out with
    `NAME: false`; a lane that takes parameters (relation) gets them as `NAME: {...}`."""
    return _channels_request(tuple(lane.name for lane in lanes()))


@lru_cache(maxsize=8)
def _channels_request(names: tuple[str, ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        "query": (Query, ...),
        "limit": (_int(1, MAX_LIMIT, "hits per lane"), 10),
        "budget_ms": (Budget, None),
    }
    for lane in lanes():
        model = _lane_params(lane.name)
        if lane.optional:
            fields[lane.name] = (bool, Field(True, description=f"false leaves the {lane.name} lane out"))
        elif model is not None:
            fields[lane.name] = (model, Field(None, description=f"the {lane.name} lane's parameters"))
    fields["snippet_chars"] = (Snippet, SNIPPET_CHARS)
    return create_model("ChannelsRequest", __base__=Request, **fields)


def channels_call(r: BaseModel) -> dict[str, Any]:
    """`Service.channels` keyword arguments of a validated channels request (HTTP and MCP alike): the
    dense switch, the relation lane's parameters as given, any other lane's switch or parameters."""
    fixed = ("query", "limit", "budget_ms", "snippet_chars", "dense", "relation")
    given = {name: v.model_dump(exclude_unset=True) if isinstance(v, BaseModel) else v
             for name, v in r if name in r.model_fields_set}
    return {"query": r.query, "limit": r.limit, "budget_ms": r.budget_ms,  # type: ignore[attr-defined]
            "dense": getattr(r, "dense", True), "relation": given.get("relation"),
            "snippet_chars": r.snippet_chars,  # type: ignore[attr-defined]
            "lanes": {k: v for k, v in given.items() if k not in fixed}}


class FeedbackRequest(Request):
    trace_id: TraceId
    node_id: NodeId


class Edge(Request):
    source: str
    target: str
    type: str


class EdgesRequest(Request):
    edges: list[Edge] = Field(min_length=1, max_length=MAX_EDGES)


class FloorRequest(Request):
    query: Query
    n: _int(1, MAX_K, "size of the floor") = None  # type: ignore[valid-type]
    budget_ms: Budget = None  # type: ignore[assignment]


class ConnectionsRequest(Request):
    query: Query
    dial: _int(0, MAX_DIAL, f"seats offered: 0 none, up to {MAX_DIAL}") = DEFAULT_DIAL  # type: ignore[valid-type]
    session_id: NodeId = None  # type: ignore[assignment]
    budget_ms: Budget = None  # type: ignore[assignment]


class RevealRequest(Request):
    trace_id: TraceId
    answer_sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{64}$"),
                             Field(description="the SHA-256 of your finished answer")]


class VerdictRequest(Request):
    a_id: NodeId
    b_id: NodeId
    marker: _int(0, 10_000_000)  # type: ignore[valid-type]
    verdict: str = Field(description="useful or not useful (the verdict spellings the CLI accepts work too)")
    who: Annotated[str, StringConstraints(min_length=1, max_length=MAX_WHO_CHARS)]
    note: Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)] = None  # type: ignore[assignment]
    trace_id: TraceId = None  # type: ignore[assignment]


class ReadRequest(Request):
    id: Annotated[str, StringConstraints(min_length=1), Field(description="a record id, or ID#section")]
    page: _int(1, 1_000_000) = 1  # type: ignore[valid-type]
    page_chars: _int(1, MAX_PAGE_CHARS) = PAGE_CHARS  # type: ignore[valid-type]


class LinksRequest(Request):
    id: Annotated[str, StringConstraints(min_length=1), Field(description="a record id")]
    hops: _int(1, 2, "2 adds the records two links away") = 1  # type: ignore[valid-type]


class LogRequest(Request):
    limit: _int(1, 10_000) = 50  # type: ignore[valid-type]


def without(model: type[BaseModel], *drop: str) -> type[BaseModel]:
    """`model` less some fields (an MCP tool that does not take them)."""
    fields = {n: (f.annotation, FieldInfo.merge_field_infos(f)) for n, f in model.model_fields.items() if n not in drop}
    return create_model(model.__name__, __base__=Request, **fields)  # type: ignore[call-overload]


# ---- validation -----------------------------------------------------------------------------------------

def _what(schema: dict) -> str:
    """What a JSON schema accepts, in words (`an integer 1..100`, `true or false`, `one of a, b`)."""
    if "anyOf" in schema:
        parts = [_what(s) for s in schema["anyOf"] if s.get("type") != "null"]
        null = any(s.get("type") == "null" for s in schema["anyOf"])
        return " or ".join(parts) + (" or null" if null else "")
    if "enum" in schema or "const" in schema:
        return "one of " + ", ".join(map(str, schema.get("enum", [schema.get("const")])))
    t = schema.get("type")
    lo, hi = schema.get("minimum"), schema.get("maximum")
    rng = f" {lo}..{hi}" if lo is not None and hi is not None else f" >= {lo}" if lo is not None else ""
    if t == "integer":
        return "an integer" + rng
    if t == "number":
        return "a finite number" + (f" in [{lo}, {hi}]" if lo is not None and hi is not None else "")
    if t == "boolean":
        return "true or false (a JSON boolean)"
    if t == "string":
        if "pattern" in schema:
            return f"a string matching {schema['pattern']}"
        return "a string" + (f" of at most {schema['maxLength']} characters" if "maxLength" in schema else "")
    if t == "array":
        return "a list" + (f" of {_what(schema['items'])}" if "items" in schema and "type" in schema["items"] else "")
    if t == "object" or "$ref" in schema or "properties" in schema:
        extra = schema.get("additionalProperties")
        return "an object" + (f" of {extra['type']} values" if isinstance(extra, dict) and "type" in extra else "")
    return "valid"


def _field_schema(model: type[BaseModel], name: str) -> dict:
    return json_schema(model)["properties"].get(name, {})


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], args: dict, method_field: str | None = None) -> M:
    """`args` validated by `model` (then a method's `params` by that method's model), or the first
    problem as an `ApiError` with a stable code: unknown_field, missing_NAME, NAME_out_of_range,
    query_too_long / empty_query, bad_NAME."""
    if not isinstance(args, dict):
        raise ApiError(400, "bad_json", "arguments must be a JSON object")
    try:
        req = model.model_validate(args)
    except ValidationError as exc:
        raise refusal(model, exc, args) from None
    if method_field is not None and getattr(req, "params", None) is not None:
        method = getattr(req, method_field)
        if any(s.name == method for s in method_specs()):
            check_method_params(method, getattr(req, "params"))
    return req


def check_method_params(method: str, params: dict, code: str = "bad_params") -> dict:
    """A method's parameters checked by the model built from its declaration."""
    try:
        return method_params(method).model_validate(params).model_dump(exclude_unset=True)
    except ValidationError as exc:
        e = _first(exc)
        spec = method_spec(method)
        declared = {p.name: p for p in spec.params}
        key = str(e["loc"][0]) if e["loc"] else ""
        if key not in declared:
            takes = ", ".join(declared) if declared else "no parameters"
            raise ApiError(400, code, f"method {method!r} takes no parameter {key!r}; it takes {takes}") from None
        value = params.get(key)
        raise ApiError(400, code, f"method {method!r}: parameter {key!r} must be {declared[key].allowed()}, "
                       f"got {value!r} ({type(value).__name__})") from None


def _first(exc: ValidationError) -> Any:
    errors = exc.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def refusal(model: type[BaseModel], exc: ValidationError, args: dict) -> ApiError:
    """The first problem of a validation as an `ApiError` naming the field and what it accepts."""
    e = _first(exc)
    name = str(e["loc"][0]) if e["loc"] else "arguments"
    kind = e["type"]
    if kind == "extra_forbidden":
        return ApiError(400, "unknown_field", f"unknown field {name!r}; allowed: "
                        f"{', '.join(sorted(model.model_fields))}")
    schema = _field_schema(model, name)
    if kind == "missing":
        return ApiError(400, f"missing_{name}", f"{name} is required ({_what(schema)})")
    value = args.get(name)
    if len(e["loc"]) > 1 and isinstance(value, dict) and (method := _params_method(model, name)):
        check_method_params(method, value, f"bad_{name}")  # raises: a lane's parameters in its method's wording
    if kind in ("greater_than_equal", "less_than_equal") and len(e["loc"]) == 1:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        return ApiError(400, f"{name}_out_of_range", f"{name} must be between {lo} and {hi}, got {value!r}",
                        min=lo, max=hi)
    if kind == "too_long" and len(e["loc"]) == 1:
        return ApiError(400, f"{name}_out_of_range", f"{name} must have at most {schema.get('maxItems')} items, "
                        f"got {len(value or ())}")
    if name == "query" and kind == "string_too_short":
        return ApiError(400, "empty_query", "query is empty; send some words to search for")
    if name == "query" and kind == "string_too_long":
        return ApiError(400, "query_too_long", f"query has {len(value or '')} characters; at most {MAX_QUERY_CHARS}",
                        max_chars=MAX_QUERY_CHARS)
    where = ".".join(str(p) for p in e["loc"])
    inner = f" ({where}: {e['msg'].lower()})" if len(e["loc"]) > 1 else ""
    return ApiError(400, f"bad_{name}", f"{name} must be {_what(schema)}, got {_short(value)}{inner}")


def _params_method(model: type[BaseModel], name: str) -> str | None:
    """The method whose parameters field `name` of `model` holds (a lane's, e.g. relation), or None."""
    ann = model.model_fields[name].annotation if name in model.model_fields else None
    for arg in getattr(ann, "__args__", (ann,)):
        if isinstance(arg, type) and issubclass(arg, BaseModel) and arg.__name__.startswith("Params_"):
            return next((s.name for s in method_specs() if method_params(s.name) is arg), None)
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# ---- GET query strings ----------------------------------------------------------------------------------

def from_query(model: type[BaseModel], query: dict[str, str]) -> dict:
    """A GET query string read into the model's declared JSON types (text is all a URL carries): integers,
    numbers, booleans (true/false, 1/0, yes/no) and objects (JSON text); an empty value is absent.
    Unreadable text stays text, which the model then refuses by name."""
    props = json_schema(model).get("properties", {})
    out: dict[str, Any] = {}
    for key, text in query.items():
        if text == "" and key != "query":
            continue
        types = json_types(props.get(key, {}))
        out[key] = _read(text, types)
    return out


def json_types(schema: dict) -> set[str]:
    """The JSON types a schema admits (a reference counts as an object)."""
    if "anyOf" in schema:
        return {t for s in schema["anyOf"] for t in json_types(s)}
    return {schema["type"]} if "type" in schema else ({"object"} if "$ref" in schema else set())


def _read(text: str, types: set[str]) -> Any:
    t = text.strip()
    if "integer" in types:
        try:
            return int(t)
        except ValueError:
            pass
    if "number" in types:
        try:
            return float(t)
        except ValueError:
            pass
    if "boolean" in types and t.lower() in TRUE_WORDS + FALSE_WORDS:
        return t.lower() in TRUE_WORDS
    if "object" in types:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text
