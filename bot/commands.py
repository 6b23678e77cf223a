"""The command table: every slash command the bot answers, built once from the agents; adapters
register platform commands (Slack's manifest, Discord's schema) and help text from it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from bot.locale import Language

if TYPE_CHECKING:
    from bot.agent import AgentDefinition, TurnInput

# Discord's rule for command and option names; Slack's is looser, so one rule serves both.
_NAME = re.compile(r"^[a-z0-9_-]{1,32}$")
DESCRIPTION_MAX = 100  # Discord's limit for command and option descriptions


class CommandError(ValueError):
    """A command definition no platform would accept (bad name, clash, description too long)."""


@dataclass(frozen=True)
class CommandOption:
    """One argument of a command: the free text after it, or an attached file."""

    name: str
    description: str
    kind: Literal["text", "file"] = "text"
    required: bool = True


QUERY = CommandOption("query", "What you are looking for, in your own words")


@dataclass(frozen=True)
class Command:
    """A slash command. `agent` names the agent it starts; built-ins (reset, help) have none."""

    name: str
    description: str
    usage: str = ""  # what typically follows the command, e.g. "Paris under $200 next weekend"
    options: tuple[CommandOption, ...] = ()
    agent: str | None = None
    aliases: tuple[str, ...] = ()
    needs_input: bool = True  # an agent command with nothing after it gets its usage instead
    description_ja: str = ""  # the same in Japanese, for a Japanese user's help (else the English)
    usage_ja: str = ""

    @property
    def slash(self) -> str:
        return f"/{self.name}"

    def example(self, language: Language = "en") -> str:
        usage = self.usage_ja if language == "ja" and self.usage_ja else self.usage
        return f"{self.slash} {usage}".strip()

    def described(self, language: Language = "en") -> str:
        return self.description_ja if language == "ja" and self.description_ja else self.description

    def usage_line(self, language: Language = "en") -> str:
        """The reply to the command without its input."""
        return f"{'使い方' if language == 'ja' else 'Usage'}: `{self.example(language)}`"


RESET = Command("reset", "Start this conversation over", aliases=("new",), needs_input=False,
                description_ja="会話を最初からやり直します")
HELP = Command("help", "List what I can do", needs_input=False, description_ja="できることを一覧にします")
BUILT_INS = (RESET, HELP)


def _check(command: Command) -> None:
    for name in (command.name, *command.aliases, *(o.name for o in command.options)):
        if not _NAME.match(name):
            raise CommandError(f"command or option name {name!r} must match {_NAME.pattern}")
    for text in (command.description, *(o.description for o in command.options), *filter(None, [command.description_ja])):
        if not 1 <= len(text) <= DESCRIPTION_MAX:
            raise CommandError(f"/{command.name}: descriptions take 1-{DESCRIPTION_MAX} characters: {text!r}")


@dataclass
class CommandTable:
    """The agents' commands, then the built-ins. Lookup ignores case and a leading slash."""

    commands: tuple[Command, ...]
    _index: dict[str, Command] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for command in self.commands:
            _check(command)
            for name in (command.name, *command.aliases):
                if name in self._index:
                    raise CommandError(f"/{name} is defined twice")
                self._index[name] = command

    @classmethod
    def of(cls, agents: Sequence[AgentDefinition]) -> CommandTable:
        return cls(tuple(agent.command_spec() for agent in agents) + BUILT_INS)

    def __iter__(self) -> Iterator[Command]:
        return iter(self.commands)

    def get(self, name: str) -> Command | None:
        return self._index.get(name.strip().lstrip("/").lower())

    def for_agent(self, agent: str) -> Command | None:
        return next((c for c in self.commands if c.agent == agent), None)

    def agent_commands(self) -> list[Command]:
        return [c for c in self.commands if c.agent is not None]

    def parse(self, line: str) -> tuple[str | None, str]:
        """A typed line ("/hotel Paris") as (command name, the rest); (None, line) without one.
        For surfaces where commands are typed as text (the console); an unknown name is kept so
        the runtime can say it does not know it."""
        from bot.agent import TurnInput

        typed = TurnInput.typed(line)
        if typed.command is None:
            return None, line
        known = self.get(typed.command)
        return (known.name if known else typed.command), typed.text

    def turn(self, line: str, **fields: Any) -> TurnInput:
        """A message as a turn: a known command at its start becomes the turn's command ("/hotel
        Paris" → hotel, "Paris"); anything else, "/usr/bin" included, stays text."""
        from bot.agent import TurnInput

        name, rest = self.parse(line)
        if name is not None and self.get(name) is not None:
            return TurnInput(text=rest, command=name, **fields)
        return TurnInput(text=line, **fields)

    def help_text(self, only: str | None = None, language: Language = "en") -> str:
        """What each command does, in Markdown, in `language` where the commands say it in Japanese;
        `only` narrows it to one command when known."""
        chosen = [c for c in self.commands if only is not None and c is self.get(only)] or list(self.commands)
        ja = language == "ja"
        lines = ["できること:" if ja else "Here is what I can do:"] if len(chosen) > 1 else []
        for command in chosen:
            example = f" — {'例:' if ja else 'e.g.'} `{command.example(language)}`" if command.usage else ""
            lines.append(f"• `{command.slash}` — {command.described(language)}{example}")
        return "\n".join(lines)
