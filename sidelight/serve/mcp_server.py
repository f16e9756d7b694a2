"""`sidelight mcp INDEX`: the lanes as MCP tools for an LLM client (official `mcp` SDK, `MCPServer`).

Transports: stdio (default) or streamable HTTP (`--http PORT`, path `/mcp`), behind the HTTP API's
`Guard`: the Host header is checked, and with an access token (required beyond loopback) every request
needs ``Authorization: Bearer TOKEN``. The tools call the same `Service` as the HTTP API, so budgets,
fallback labels, traces and the query log (interface "mcp") are shared. Arguments are
validated by the HTTP API's request models (`requests`: strict types, declared ranges, unknown keys
refused), which are also each tool's input schema; a refusal is a tool error whose text is
``CODE: message``, the code and message the HTTP API answers (e.g. ``bad_k: ...``, ``unknown_trace: ...``).
"""

from __future__ import annotations

import copy
import inspect
import json
from typing import Any

from ..index.passages import SNIPPET_CHARS
from ..index.reading import PAGE_CHARS
from ..lanes.registry import lanes
from .engine import Service
from .requests import (
    ConnectionsRequest,
    FeedbackRequest,
    LinksRequest,
    LookupRequest,
    ReadRequest,
    RevealRequest,
    SearchRequest,
    channels_call,
    channels_request,
    json_schema,
    parse,
    without,
)
from .validate import ApiError

# The tools' arguments are validated by `TOOLS` before a tool runs; the SDK's own model of a tool's
# signature then only passes them on, so each argument is typed Any here.
Arg = Any


def tool_models() -> dict[str, Any]:
    """Tool name -> the request model of its arguments (the HTTP call's, less what the tool does not take)."""
    return {"search_channels": channels_request(), "read": ReadRequest, "links": LinksRequest,
            "record_success": FeedbackRequest, "search": SearchRequest, "lookup": LookupRequest,
            "connections": without(ConnectionsRequest, "session_id"), "reveal": RevealRequest}

INSTRUCTIONS = (
    "sidelight retrieves records from one index in separate lanes that are never fused. Call search_channels "
    "with the user's question, read every lane yourself and decide which records you actually use. Retrieval "
    "is not validation: a hit is a candidate, not evidence that it is correct, relevant or endorsed. When you use "
    "a record, call record_success with the trace_id of the lane you took it from and that record's node id, and "
    "mention both in your answer. Answers that skipped or cut a stage say so (fallback, partial): mention it when "
    "it matters.")

def search_channels_description() -> str:
    """The search_channels tool's description: every registered lane's own description (`lanes.registry`)."""
    return ("Search one query in independent lanes, each with its own trace_id; nothing is fused and scores "
            "compare only within a lane. A lane whose index lacks what it needs is left out.\n"
            + "".join(f"- {lane.name}: {lane.description}\n" for lane in lanes())
            + "agreement_node_ids lists ids found in more than one lane (not a combined score). Being retrieved does "
            "not mean selected, validated or used. If you use a record, call record_success(trace_id of THAT lane, "
            "node_id) and report the trace id and node id you used. fallback ('lexical-only': dense stage skipped, "
            "e.g. model still loading) and partial (time budget ran out) label a reduced answer; stages lists what "
            "ran and missing_lanes the lanes that did not answer. dense=false (a boolean) leaves the dense lane out; "
            "relation={...} sets the relation lane's parameters.")


RECORD_SUCCESS = (
    "Report that you actually used a record: pass the trace_id of the lane that returned it and its node_id (the "
    "hit's id). Only a relation-lane success strengthens that hit's edge path (changed_edges lists old -> new "
    "weight per credited edge); a lexical or dense success is recorded and changes no edge. A node can only be "
    "credited through a trace that returned it; repeating a call changes nothing. Do not call it for records you "
    "merely looked at. Mention the trace id and node id in your answer.")

SEARCH = (
    "Top-k records of one named ranking method (default 'bm25'; others include 'tfidf', 'dense', 'rrf', "
    "'bm25+ppr'; see the readiness resource for the list). Scores compare only within the method. Stores no "
    "trace, so its hits cannot be credited: use search_channels when you may report what you used. A dense "
    "method answers with BM25 and fallback='lexical-only' while the model loads. `params` sets the method's "
    "declared parameters (e.g. {\"alpha\": 0.8} for bm25+ppr; the readiness resource lists each method's).")

LOOKUP = (
    "Find the word for a description (a reverse dictionary): use it when the user describes a thing, act or "
    "quality and wants its name, e.g. 'a tower by the sea with a bright lamp that warns ships'. Returns words "
    "ranked by their best sense (with each sense's id and gloss); pos limits to noun, verb, adjective or adverb; "
    "the frequency prior (on by default with dense; prior 0 turns it off) puts common words first. Works on dictionary indexes such as wordnet-all. Stores no trace.")

CONNECTIONS = (
    "Serendipity lane: connections to the query's floor through certified markers, with a dial for how many "
    "seats (0 = none). The panel stays hidden until you have finished your answer and called reveal with its "
    "SHA-256; a surprising connection is a prompt to think, not evidence. Answers 'not available' while the index "
    "has no serendipity certificate (`sidelight certify INDEX` builds one).")

REVEAL = (
    "Reveal the connections panel of a connections trace after you have written your answer: pass that trace_id "
    "and the SHA-256 (64 hex digits) of your finished answer, so later changes to the answer can be detected.")


READ = (
    "Read a record found by a search: its text (a page of it when long: page, pages and the page's character "
    "span), its outline (every section's heading path and lines) and its links out and in, each with the sentence "
    "it sits in. id is a hit's id, or ID#Section (a heading path 'A > B', a heading or an anchor) for one section: "
    "the passage.section of a hit names the section that matched. Quote from what you read, not from snippets.")

LINKS = (
    "A record's links: links_out (what it links to) and links_in (what links to it), each with the linking "
    "sentence and the heading it names; hops=2 adds the records two links away and the record between. Use it "
    "for 'what links to X' and 'what does X link to'.")


def lean(out: dict) -> dict:
    """A channels reply without what never changes between calls or only explains a score: the lane
    descriptions (they are in this tool's description), each lane's fixed settings (its parameters, but
    the anchors and cue it chose), a relation hit's score parts (and its seed where its path starts there), the timings and the stages that ran
    (those skipped stay, with their reason); scores to 4 decimals."""
    out.pop("descriptions", None)
    out.pop("timings_ms", None)
    if isinstance(out.get("stages"), list):
        out["stages"] = [st for st in out["stages"] if not (isinstance(st, dict) and st.get("status") == "done")]
    for name in [lane.name for lane in lanes()]:
        lane = out.get(name)
        if isinstance(lane, dict):
            params = lane.get("params") or {}
            lane["params"] = {k: params[k] for k in ("anchors", "cue") if k in params}
            for hit in lane.get("hits") or []:
                if isinstance(hit, dict):
                    hit.pop("parts", None)
                    path = hit.get("path")
                    if path and isinstance(path[0], dict) and path[0].get("source") == hit.get("seed"):
                        hit.pop("seed")  # the path starts at it
                    if isinstance(hit.get("score"), float):
                        hit["score"] = round(hit["score"], 4)
    return out


def compact(result):
    """A tool reply's text content as compact JSON (the SDK indents it: a third of the bytes are spaces)."""
    from mcp.types import CallToolResult, TextContent

    data = getattr(result, "structured_content", None)
    if isinstance(result, CallToolResult) and isinstance(data, dict) and not result.is_error:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return result.model_copy(update={"content": [TextContent(type="text", text=text)]})
    return result


def build_server(service: Service, name: str = "sidelight"):
    """An `MCPServer` exposing `service` (tools + the `sidelight://readiness` resource)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    models = tool_models()

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
            """Validate the arguments by the tool's request model first: the HTTP API's code and message."""
            if name in models and self._tool_manager.get_tool(name) is not None:
                try:
                    parse(models[name], arguments or {}, method_field="method" if name == "search" else None)
                except ApiError as exc:
                    raise ToolError(f"{exc.code}: {exc.message}") from None
            try:
                return compact(await super().call_tool(name, arguments, context))
            except ToolError as exc:  # the service's refusal, without the SDK's "Error executing tool" prefix
                if type(exc.__cause__) is ToolError:
                    raise ToolError(str(exc.__cause__)) from None
                raise

    server = Server(name, instructions=INSTRUCTIONS, log_level="WARNING")

    def schema(tool_name: str) -> None:
        """The tool's input schema: its request model's."""
        tool = server._tool_manager.get_tool(tool_name)
        if tool is not None:
            tool.parameters = copy.deepcopy(json_schema(models[tool_name]))

    def call(fn, *args) -> dict:
        try:
            return fn(*args)
        except ApiError as exc:
            if exc.status == 501:
                return {"available": False, "code": exc.code, "message": exc.message}
            raise ToolError(f"{exc.code}: {exc.message}") from None

    def search_channels(**args: Any) -> dict[str, Any]:
        # already checked (`Server.call_tool`): this builds the request from what was given (the SDK fills
        # in None for an absent argument)
        r = models["search_channels"].model_validate({k: v for k, v in args.items() if v is not None})
        return lean(call(lambda: service.channels(**channels_call(r))))

    # its arguments are the channels request's fields, a lane registered later included
    search_channels.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=Any,
                           default=inspect.Parameter.empty if f.is_required() else f.default)
         for n, f in models["search_channels"].model_fields.items()],
        return_annotation=dict[str, Any])
    server.tool(name="search_channels", description=search_channels_description())(search_channels)

    @server.tool(name="read", description=READ)
    def read(id: str, page: Arg = 1, page_chars: Arg = PAGE_CHARS) -> dict[str, Any]:
        return call(service.read, id, page, page_chars)

    @server.tool(name="links", description=LINKS)
    def links(id: str, hops: Arg = 1) -> dict[str, Any]:
        return call(service.links, id, hops)

    @server.tool(name="record_success", description=RECORD_SUCCESS)
    def record_success(trace_id: str, node_id: str) -> dict[str, Any]:
        return call(service.feedback, trace_id, node_id)

    @server.tool(name="search", description=SEARCH)
    def search(query: str, method: str = "bm25", k: Arg = 10, budget_ms: Arg = None,
               params: dict[str, Any] | None = None, filter: dict[str, str] | None = None,
               snippet_chars: Arg = SNIPPET_CHARS) -> dict[str, Any]:
        return call(service.search, query, method, k, budget_ms, params, filter, snippet_chars)

    if service.offers_lookup():  # a tool is listed only where the index can serve it
        @server.tool(name="lookup", description=LOOKUP)
        def lookup(query: str, k: Arg = 10, method: str | None = None, pos: str | None = None,
                   prior: float | None = None) -> dict[str, Any]:
            return call(service.lookup, query, k, method, pos, prior)

    if service.offers_connections():
        @server.tool(name="connections", description=CONNECTIONS)
        def connections(query: str, dial: Arg = 3, budget_ms: Arg = None) -> dict[str, Any]:
            return call(service.connections, query, dial, budget_ms)

        @server.tool(name="reveal", description=REVEAL)
        def reveal(trace_id: str, answer_sha256: str) -> dict[str, Any]:
            return call(service.reveal, trace_id, answer_sha256)

    for tool_name in models:
        schema(tool_name)

    @server.resource("sidelight://readiness", name="readiness", mime_type="application/json",
                     description="Readiness: index loaded, dense model state, certificate status and ranking "
                                 "methods.")
    def readiness() -> str:
        h = service.health()
        h["methods"] = service.methods()
        return json.dumps(h, ensure_ascii=False)

    return server


def http_app(service: Service, host: str = "127.0.0.1", allowed_hosts: list[str] | None = None,
             access_token: str | None = None):
    """The streamable-HTTP MCP app (path /mcp) behind `Guard`: Host check and, when set, the access token."""
    from mcp.server.transport_security import TransportSecuritySettings

    from .guard import Guard

    if allowed_hosts is None or "*" in allowed_hosts:  # --allow-host '*': no Host check at all
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    else:  # the SDK's own Host / Origin check, over the same names as `Guard` (any port)
        security = TransportSecuritySettings(
            allowed_hosts=[p for h in allowed_hosts for p in (h, f"{h}:*")],
            allowed_origins=[p for h in allowed_hosts for s in ("http", "https") for p in (f"{s}://{h}", f"{s}://{h}:*")])
    app = build_server(service).streamable_http_app(host=host, transport_security=security)
    return Guard(app, allowed_hosts=allowed_hosts, access_token=access_token)


def run(service: Service, http_port: int | None = None, host: str = "127.0.0.1",
        allowed_hosts: list[str] | None = None, access_token: str | None = None) -> None:
    """Serve over stdio, or streamable HTTP on `host:http_port` (path /mcp; see `http_app`)."""
    service.start()
    if http_port is None:
        build_server(service).run("stdio")
        return
    import uvicorn

    uvicorn.run(http_app(service, host, allowed_hosts, access_token), host=host, port=int(http_port),
                log_level="warning")
