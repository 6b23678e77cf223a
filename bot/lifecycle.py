"""The turn lifecycle: an explicit, table-driven state machine persisted after every transition."""

from __future__ import annotations

from enum import StrEnum


class TurnState(StrEnum):
    IDLE = "idle"
    PROCESSING = "processing"
    TOOL_CALL = "tool_call"
    RESPONDING = "responding"
    ERROR = "error"


class TurnEvent(StrEnum):
    USER_MESSAGE = "user_message"
    TOOL_REQUIRED = "tool_required"
    TOOL_DONE = "tool_done"
    LLM_DONE = "llm_done"
    MESSAGE_SENT = "message_sent"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # the process died mid-turn (found at start-up) or shutdown stopped it


S, E = TurnState, TurnEvent

# state -> event -> next state. Anything not listed is an illegal transition.
TRANSITIONS: dict[TurnState, dict[TurnEvent, TurnState]] = {
    S.IDLE: {E.USER_MESSAGE: S.PROCESSING},
    S.PROCESSING: {
        E.TOOL_REQUIRED: S.TOOL_CALL,
        E.LLM_DONE: S.RESPONDING,
        E.FAILED: S.ERROR,
        E.INTERRUPTED: S.ERROR,
    },
    S.TOOL_CALL: {
        E.TOOL_DONE: S.PROCESSING,
        E.TOOL_REQUIRED: S.TOOL_CALL,
        E.LLM_DONE: S.RESPONDING,
        E.FAILED: S.ERROR,
        E.INTERRUPTED: S.ERROR,
    },
    S.RESPONDING: {E.MESSAGE_SENT: S.IDLE, E.FAILED: S.ERROR, E.INTERRUPTED: S.ERROR},
    S.ERROR: {E.USER_MESSAGE: S.PROCESSING, E.FAILED: S.ERROR, E.INTERRUPTED: S.ERROR},
}

IN_FLIGHT = (S.PROCESSING, S.TOOL_CALL, S.RESPONDING)


class IllegalTransition(Exception):
    pass


def next_state(state: TurnState | str, event: TurnEvent) -> TurnState:
    current = TurnState(state)
    try:
        return TRANSITIONS[current][event]
    except KeyError:
        raise IllegalTransition(f"{event} is not allowed in state {current}") from None
