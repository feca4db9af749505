"""The state explorer: a local web server over the model, explored lazily.

`Explorer` numbers states as they are first seen and asks the model's
successor function (the one the checker explores) only for the states a
reader looks at; the shortest path from the initial state is found by a
breadth-first search that resumes where the last one stopped. The HTTP side
is the standard library's `http.server`, bound to loopback; the page it
serves is a thin client of the JSON API (documented in docs/report.md):

- `GET /api/start`: the configuration, the initial state's id, and the ids of
  the counterexample the explorer was started at (`--from-trace`);
- `GET /api/state/<id>`: the state's variables, grouped, and every state
  invariant's verdict with its witnesses;
- `GET /api/successors/<id>`: the enabled action instances, each with its words,
  what it changes, the successor's id and the transition properties it breaks;
- `GET /api/path/<id>`: the shortest path from the initial state to the state
  (503 with `"searching": true` while the search has not reached it yet).

Every answer is JSON, errors and other methods (405) included.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from protocol import properties as props
from protocol.model.next import model_for
from protocol.render.narrate import grouped_changes, grouped_variables, narrate, value_text
from protocol.model.trace import Trace

LOOPBACK = "127.0.0.1"
LIVENESS_NOTE = ("a liveness property is about whole behaviours, not one state: "
                 "`python -m protocol check` decides it")


class UnknownState(LookupError):
    """An id no state has been given yet."""


class StillSearching(LookupError):
    """The breadth-first search has not reached the state yet: ask again (503)."""


# The breadth-first search behind "shortest path here" keeps every state it
# reaches (about 1 kB each in Python objects): past this many it stops, and a
# state it did not reach is answered as beyond the bound, not searched for ever.
PATH_SEARCH_LIMIT = 1_000_000
PATH_WAIT_SECONDS = 2.0  # how long one request waits for the search before answering "ask again"
SEARCH_BATCH = 256  # states expanded per turn of the search thread, between two takings of the lock


class Explorer:
    """The model's state graph, numbered and expanded only where it is looked at.

    The shortest paths come from one breadth-first search that runs on its own
    thread, started by the first path asked for, and holds the lock only to
    number what it found: a request waits for it at most PATH_WAIT_SECONDS
    (answering "still searching" after that), and every other request is
    answered meanwhile.
    """

    def __init__(self, named, trace: Trace | None = None, search_limit: int = PATH_SEARCH_LIMIT):
        self.named = named
        self.cfg = named.config
        model = model_for(self.cfg)
        self._successors = model.successors
        # Exactly the properties of this configuration (`Property.where`), bound to it.
        self.invariants, self.transition_properties = model.invariants, model.transition_properties
        self.liveness = list(model.liveness)
        self._expanded: dict[int, list] = {}
        self.states: list = []
        self.ids: dict = {}
        self.initial = self.id_of(model.initial_states[0])
        self.trace_ids = [self.id_of(step.state) for step in trace.steps] if trace else []
        self.trace_actions = [None if step.action is None else str(step.action) for step in trace.steps] if trace else []
        self.trace_prop = trace.prop if trace else None
        self.lock = threading.RLock()  # the server answers on several threads
        # The breadth-first search behind `path`: parents of the states it has reached.
        self.search_limit = search_limit
        self._parent = {self.initial: None}
        self._frontier = deque([self.initial])
        self._searched = threading.Condition(self.lock)  # notified as the search reaches states
        self._search: threading.Thread | None = None
        self._search_over = False  # the frontier is empty, or the bound was reached
        self.stopping = threading.Event()

    def id_of(self, state) -> int:
        if state not in self.ids:
            self.ids[state] = len(self.states)
            self.states.append(state)
        return self.ids[state]

    def state(self, state_id: int):
        if not 0 <= state_id < len(self.states):
            raise UnknownState(f"no state has id {state_id} yet: ids come from /api/start and /api/successors")
        return self.states[state_id]

    def successors(self, state_id: int) -> list:
        """[(label, successor id)], in the model's enumeration order, computed once per state."""
        if state_id not in self._expanded:
            found = self._successors(self.state(state_id))
            self._expanded[state_id] = [(label, self.id_of(after)) for label, after in found]
        return self._expanded[state_id]

    def path(self, state_id: int, wait: float = PATH_WAIT_SECONDS) -> list:
        """The shortest path [(label or None, id)] from the initial state to `state_id`.
        Waiting for the search releases the lock."""
        with self.lock:
            return self._path(state_id, wait)

    def _path(self, state_id: int, wait: float) -> list:
        self.state(state_id)
        if state_id not in self._parent:
            self._start_search()
            self._searched.wait_for(lambda: state_id in self._parent or self._search_over, timeout=wait)
        if state_id not in self._parent:
            if not self._search_over:
                raise StillSearching(f"the breadth-first search has reached {len(self._parent):,} states, "
                                     f"not yet state {state_id}: ask again")
            if self._frontier:
                raise UnknownState(f"state {state_id} is not among the {self.search_limit:,} states nearest "
                                   "the initial state, where the search for shortest paths stops")
            raise UnknownState(f"state {state_id} is not reachable from the initial state")
        path = []
        at = state_id
        while at is not None:
            parent = self._parent[at]
            path.append((None if parent is None else parent[1], at))
            at = None if parent is None else parent[0]
        return path[::-1]

    def _start_search(self) -> None:
        if self._search is None:
            self._search = threading.Thread(target=self._breadth_first, name="explorer-search", daemon=True)
            self._search.start()

    def _breadth_first(self) -> None:
        """The search thread: expand the frontier a batch at a time, the successors computed
        without the lock (the model's successor function is pure), numbered with it."""
        while not self.stopping.is_set():
            with self.lock:
                if not self._frontier or len(self._parent) >= self.search_limit:
                    self._search_over = True
                    self._searched.notify_all()
                    return
                batch = [self._frontier.popleft() for _ in range(min(SEARCH_BATCH, len(self._frontier)))]
                states = [self.states[state_id] for state_id in batch]
            found = [self._successors(state) for state in states]
            with self.lock:
                for current, successors in zip(batch, found):
                    for label, after in successors:
                        after_id = self.id_of(after)
                        if after_id not in self._parent:
                            self._parent[after_id] = (current, label)
                            self._frontier.append(after_id)
                self._searched.notify_all()

    # ------------------------------------------------------------ records

    def start_record(self) -> dict:
        return {"config": self.named.name, "constants": self.cfg.constants, "switches": self.cfg.switches,
                "initial": self.initial, "trace": self.trace_ids, "trace_actions": self.trace_actions,
                "trace_property": self.trace_prop,
                "expected_violation": self.named.expected_violation()}

    def state_record(self, state_id: int) -> dict:
        state = self.state(state_id)
        verdicts = {}
        for name, holds in self.invariants.items():
            ok = holds(state)
            verdicts[name] = {"holds": ok, "witnesses": [] if ok else props.witnesses_of(name)(state, self.cfg)}
        return {
            "id": state_id,
            "initial": state_id == self.initial,
            "groups": [{"group": group, "variables": [{"name": name, "value": value_text(name, value)}
                                                      for name, value in variables]}
                       for group, variables in grouped_variables(state)],
            "properties": verdicts,
            "transition_properties": list(self.transition_properties),
            "liveness_properties": {name: LIVENESS_NOTE for name in self.liveness},
        }

    def successors_record(self, state_id: int) -> dict:
        before = self.state(state_id)
        found = []
        for label, after_id in self.successors(state_id):
            after = self.states[after_id]
            found.append({
                "action": str(label),
                "id": after_id,
                "words": narrate(label, before, after, self.cfg),
                "changes": [{"group": group, "variable": c.variable,
                             "before": value_text(c.variable, c.before), "after": value_text(c.variable, c.after)}
                            for group, changes in grouped_changes(before, after) for c in changes],
                "breaks": [name for name, holds in self.transition_properties.items() if not holds(before, after)],
            })
        return {"id": state_id, "successors": found}

    def path_record(self, state_id: int) -> dict:
        return {"id": state_id, "path": [{"action": None if label is None else str(label), "id": at}
                                         for label, at in self.path(state_id)]}


# ------------------------------------------------------------------ HTTP

ROUTES = {
    "state": Explorer.state_record,
    "successors": Explorer.successors_record,
    "path": Explorer.path_record,
}
API_PATH = re.compile(r"^/api/(state|successors|path)/(\d+)$")
MAX_ID_DIGITS = 20  # longer than any id a search of this process could give


class Handler(BaseHTTPRequestHandler):
    explorer: Explorer  # set on the subclass `serve` makes
    page: str

    def do_GET(self):  # noqa: N802 - http.server's name
        hosts = self.headers.get_all("Host") or []
        if len(hosts) > 1:  # which one counts is ambiguous: RFC 9112 asks for 400
            return self._json(HTTPStatus.BAD_REQUEST, {"error": f"the request has {len(hosts)} Host headers: send one"})
        if not self._host_is_ours():
            return self._json(HTTPStatus.FORBIDDEN, {
                "error": f"Host {self.headers.get('Host')!r} is not this server: ask for "
                         f"http://{LOOPBACK}:{self.server.server_address[1]}/ or localhost"})
        cross = self._cross_site()
        if cross is not None:
            return self._json(HTTPStatus.FORBIDDEN, {"error": cross})
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            return self._send(HTTPStatus.OK, self.page.encode("utf-8"), "text/html; charset=utf-8")
        if path == "/api/start":
            return self._json(HTTPStatus.OK, self.explorer.start_record())
        found = API_PATH.match(path)
        if not found:
            return self._json(HTTPStatus.NOT_FOUND, {"error": f"no such resource {path}: see docs/report.md"})
        if len(found.group(2)) > MAX_ID_DIGITS:  # int() refuses past 4,300 digits; no id has a twentieth
            return self._json(HTTPStatus.BAD_REQUEST, {
                "error": f"a state id of {len(found.group(2)):,} digits: ids are the small numbers "
                         "/api/start and /api/successors give"})
        route, state_id = ROUTES[found.group(1)], int(found.group(2))
        try:
            with self.explorer.lock:
                record = route(self.explorer, state_id)
        except UnknownState as error:
            return self._json(HTTPStatus.NOT_FOUND, {"error": str(error)})
        except StillSearching as error:
            return self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(error), "searching": True},
                              {"Retry-After": "1"})
        return self._json(HTTPStatus.OK, record)

    def _host_is_ours(self) -> bool:
        """Only a request naming this server answers: its address or localhost, at its port.
        A page elsewhere in the browser could otherwise read the API by DNS rebinding (its
        own name made to resolve to 127.0.0.1), as Jupyter and other local servers guard."""
        host = (self.headers.get("Host") or "").strip().lower()
        port = self.server.server_address[1]
        names = {LOOPBACK, "localhost", str(self.server.server_address[0])}
        return host in names or host in {f"{name}:{port}" for name in names}

    def _cross_site(self) -> str | None:
        """Why a request another site's page made is refused, or None: its Origin is not this
        server's, or the browser says (Sec-Fetch-Site) it comes from another site. A drive-by
        page could otherwise make the explorer expand a million states."""
        origin = self.headers.get("Origin")
        port = self.server.server_address[1]
        ours = {f"http://{name}:{port}" for name in (LOOPBACK, "localhost", str(self.server.server_address[0]))}
        if origin is not None and origin.strip().lower() not in ours:
            return f"Origin {origin[:80]!r} is not this server: the explorer answers its own page only"
        site = (self.headers.get("Sec-Fetch-Site") or "none").strip().lower()
        if site not in ("same-origin", "none"):
            return f"Sec-Fetch-Site {site[:40]!r}: the explorer answers its own page only, not another site's"
        return None

    def _refuse_method(self):
        """Any method but GET (and HEAD): 405, as JSON like every answer."""
        self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{self.command} is not served: the API is GET only"},
                   {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method  # noqa: N815 - http.server's names

    def do_HEAD(self):  # noqa: N802 - http.server's name
        """GET's headers without its body (a path's search is not started for it)."""
        self._head_only = True
        try:
            self.do_GET()
        finally:
            self._head_only = False

    _head_only = False

    def _json(self, status, record, headers: dict | None = None) -> None:
        self._send(status, json.dumps(record).encode("utf-8"), "application/json", headers)

    def _send(self, status, body: bytes, content_type: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not self._head_only:
            self.wfile.write(body)

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (a malformed request line, a header too long) as JSON too."""
        try:
            self.close_connection = True
            self._json(code, {"error": message or HTTPStatus(code).phrase})
        except (OSError, ValueError):
            pass

    def log_message(self, format, *args):  # noqa: A002 - http.server's name
        pass  # the terminal is for the one line saying where the explorer is, not a request log


class Server(ThreadingHTTPServer):
    daemon_threads = True  # a browser's kept-alive connection never holds up the exit

    def handle_error(self, request, client_address):
        """A browser that drops a connection mid-request (a reload, a closed tab) is no
        error of the explorer's: say nothing. Anything else is reported as usual."""
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def make_server(explorer: Explorer, port: int, host: str = LOOPBACK) -> ThreadingHTTPServer:
    """The explorer's server, bound (OSError if the port is taken) but not yet serving."""
    from protocol.render.report import explorer_page

    handler = type("ExplorerHandler", (Handler,), {"explorer": explorer, "page": explorer_page(explorer.named.name)})
    return Server((host, port), handler)
