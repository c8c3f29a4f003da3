"""Where an event stream goes on after its connection to the agent ends (both clients)."""

from __future__ import annotations

from typing import Optional

from .errors import TetherError
from .events import AgentEvent


class Resumption:
    """After the last event delivered (``last``), once a wait is over: ``shortest`` after a
    connection that ended cleanly, doubling up to ``longest`` while attempts fail. An error
    that trying again cannot help (permission denied, an unknown partition, an agent too old)
    is raised."""

    def __init__(self, after: Optional[int], shortest: float, longest: float) -> None:
        self.last = after
        self.shortest = shortest
        self.longest = longest
        self.wait = shortest

    def delivered(self, event: AgentEvent) -> AgentEvent:
        if event.seq > 0:
            self.last = event.seq
        return event

    def ended(self, error: Optional[TetherError] = None) -> float:
        """The connection ended (with ``error``, when it failed); the seconds to wait before
        connecting again."""
        if error is None:
            self.wait = self.shortest
        elif not error.transient:
            raise error
        wait = self.wait
        self.wait = min(wait * 2, self.longest)
        return wait
