"""Japanese tokenisation with SudachiPy and its bundled core dictionary (no network, no MeCab)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

_dictionary: Any = None
_dictionary_lock = threading.Lock()
_local = threading.local()
# Sudachi refuses inputs over ~49 KB; sentences are far shorter, this is only a guard.
_MAX_CHARS = 10_000


@dataclass(frozen=True)
class Token:
    surface: str
    pos: tuple[str, ...]  # (品詞, 細分類1, 細分類2, 細分類3, 活用型, 活用形)
    base: str  # dictionary form
    begin: int  # character offset in the tokenised text
    end: int

    @property
    def pos1(self) -> str:
        return self.pos[0]

    @property
    def pos2(self) -> str:
        return self.pos[1]

    @property
    def conjugation_type(self) -> str:
        return self.pos[4]

    @property
    def conjugation_form(self) -> str:
        return self.pos[5]


def _tokenizer() -> Any:
    # Tokenizer objects are not shared between threads; the dictionary (the expensive part) is.
    tokenizer = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        global _dictionary
        from sudachipy import Dictionary, SplitMode

        with _dictionary_lock:
            if _dictionary is None:
                _dictionary = Dictionary(dict="core")
        tokenizer = _dictionary.tokenizer(mode=SplitMode.C)
        _local.tokenizer = tokenizer
    return tokenizer


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    tokenizer = _tokenizer()
    for offset in range(0, len(text), _MAX_CHARS):
        chunk = text[offset : offset + _MAX_CHARS]
        for morpheme in tokenizer.tokenize(chunk):
            tokens.append(Token(
                surface=morpheme.surface(),
                pos=tuple(morpheme.part_of_speech()),
                base=morpheme.dictionary_form(),
                begin=offset + morpheme.begin(),
                end=offset + morpheme.end(),
            ))
    return tokens
