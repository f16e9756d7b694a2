"""The page `sidelight serve` serves at `/`: the exported page (`page.html`, the scripts `make web` builds)
opened in served mode, where the server runs the lanes. One page, two ways in: from an export it searches
in the browser; from the server it is the lab view (lanes, feedback, connections, corpus, report, log).
"""

from __future__ import annotations

from ..errors import InputError
from ..serve.app import Page
from ..serve.engine import Service
from ..serve.validate import DEFAULT_DIAL, MAX_DIAL
from .export import assets_folder, lane_data, page_html


def served_manifest(service: Service) -> dict:
    """What the served page needs to start: the corpus, the registered lanes and the dial's range (no data)."""
    index = service.index
    return {"served": True, "corpus": index.corpus.name, "records": len(index.corpus),
            "edges": len(index.corpus.edges), "lanes": lane_data(), "max_dial": MAX_DIAL, "default_dial": DEFAULT_DIAL}


def served_page(service: Service) -> Page:
    """The page for `create_app(..., page=...)`; without built scripts it says so in its status badge."""
    try:
        assets, status = assets_folder(), "connecting…"
    except InputError as exc:
        assets, status = None, str(exc)

    def render(token: str) -> str:
        return page_html(served_manifest(service), f"sidelight lab · {service.index.corpus.name}", token=token,
                         status=status)

    return Page(render, assets)
