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
- `GET /api/path/<id>`: the shortest path from the initial state to the state.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import invariants

from .model import model_for
from .narrate import grouped_changes, grouped_variables, narrate, value_text
from .trace import Trace

LOOPBACK = "127.0.0.1"
LIVENESS_NOTE = ("a liveness property is about whole behaviours, not one state: "
                 "`python -m protocol check` decides it")


class UnknownState(LookupError):
    """An id no state has been given yet."""


class Explorer:
    """The model's state graph, numbered and expanded only where it is looked at."""

    def __init__(self, named, trace: Trace | None = None):
        self.named = named
        self.cfg = named.config
        model = model_for(self.cfg)
        self._successors = model.successors
        # Exactly the properties of this configuration (`Property.applies`), bound to it.
        self.invariants, self.transition_properties = model.invariants, model.transition_properties
        self.liveness = list(model.liveness)
        self._expanded: dict[int, list] = {}
        self.states: list = []
        self.ids: dict = {}
        self.initial = self.id_of(model.initial_states[0])
        self.trace_ids = [self.id_of(step.state) for step in trace.steps] if trace else []
        self.trace_actions = [None if step.action is None else str(step.action) for step in trace.steps] if trace else []
        self.trace_prop = trace.prop if trace else None
        # The breadth-first search behind `path`: parents of the states it has reached.
        self._parent = {self.initial: None}
        self._frontier = deque([self.initial])
        self.lock = threading.Lock()  # the server answers on several threads

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

    def path(self, state_id: int) -> list:
        """The shortest path [(label or None, id)] from the initial state to `state_id`."""
        self.state(state_id)
        while state_id not in self._parent:
            if not self._frontier:
                raise UnknownState(f"state {state_id} is not reachable from the initial state")
            current = self._frontier.popleft()
            for label, after in self.successors(current):
                if after not in self._parent:
                    self._parent[after] = (current, label)
                    self._frontier.append(after)
        path = []
        at = state_id
        while at is not None:
            parent = self._parent[at]
            path.append((None if parent is None else parent[1], at))
            at = None if parent is None else parent[0]
        return path[::-1]

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
            verdicts[name] = {"holds": ok, "witnesses": [] if ok else invariants.witnesses_of(name)(state, self.cfg)}
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


class Handler(BaseHTTPRequestHandler):
    explorer: Explorer  # set on the subclass `serve` makes
    page: str

    def do_GET(self):  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            return self._send(HTTPStatus.OK, self.page.encode("utf-8"), "text/html; charset=utf-8")
        if path == "/api/start":
            return self._json(HTTPStatus.OK, self.explorer.start_record())
        found = API_PATH.match(path)
        if not found:
            return self._json(HTTPStatus.NOT_FOUND, {"error": f"no such resource {path}: see docs/report.md"})
        route, state_id = ROUTES[found.group(1)], int(found.group(2))
        try:
            with self.explorer.lock:
                record = route(self.explorer, state_id)
        except UnknownState as error:
            return self._json(HTTPStatus.NOT_FOUND, {"error": str(error)})
        return self._json(HTTPStatus.OK, record)

    def _json(self, status, record) -> None:
        self._send(status, json.dumps(record).encode("utf-8"), "application/json")

    def _send(self, status, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

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
    from .report import explorer_page

    handler = type("ExplorerHandler", (Handler,), {"explorer": explorer, "page": explorer_page(explorer.named.name)})
    return Server((host, port), handler)
