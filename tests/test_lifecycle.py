"""The turn lifecycle table."""

from __future__ import annotations

import pytest

from bot.lifecycle import IN_FLIGHT, TRANSITIONS, IllegalTransition, TurnEvent, TurnState, next_state


def test_a_normal_turn_with_a_tool_goes_round_to_idle() -> None:
    state = TurnState.IDLE
    for event in (TurnEvent.USER_MESSAGE, TurnEvent.TOOL_REQUIRED, TurnEvent.TOOL_DONE,
                  TurnEvent.LLM_DONE, TurnEvent.MESSAGE_SENT):
        state = next_state(state, event)
    assert state is TurnState.IDLE


@pytest.mark.parametrize("state", list(IN_FLIGHT))
def test_every_in_flight_state_can_fail_or_be_interrupted(state: TurnState) -> None:
    assert next_state(state, TurnEvent.FAILED) is TurnState.ERROR
    assert next_state(state, TurnEvent.INTERRUPTED) is TurnState.ERROR


def test_error_recovers_on_the_next_user_message() -> None:
    assert next_state(TurnState.ERROR, TurnEvent.USER_MESSAGE) is TurnState.PROCESSING


@pytest.mark.parametrize(
    ("state", "event"),
    [(TurnState.IDLE, TurnEvent.TOOL_DONE), (TurnState.IDLE, TurnEvent.MESSAGE_SENT),
     (TurnState.RESPONDING, TurnEvent.USER_MESSAGE), (TurnState.PROCESSING, TurnEvent.USER_MESSAGE)],
)
def test_illegal_transitions_are_refused(state: TurnState, event: TurnEvent) -> None:
    with pytest.raises(IllegalTransition):
        next_state(state, event)


def test_every_state_is_in_the_table() -> None:
    assert set(TRANSITIONS) == set(TurnState)
