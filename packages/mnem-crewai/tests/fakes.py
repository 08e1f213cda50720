"""A deterministic embedder and a scripted LLM, so CrewAI's memory runs with no key or network."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from crewai.llms.base_llm import BaseLLM
from crewai.memory.analyze import (
    ConsolidationPlan,
    ExtractedMemories,
    MemoryAnalysis,
    QueryAnalysis,
)

DIMENSION = 64
_WORD = re.compile(r"[a-z0-9]+")


def embed_one(text: str) -> list[float]:
    """A unit vector of hashed words: texts sharing words are near, the same text is equal."""
    vector = [0.0] * DIMENSION
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
        vector[int.from_bytes(digest[:2], "big") % DIMENSION] += 1.0 if digest[2] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def embed(texts: list[str]) -> list[list[float]]:
    """CrewAI's embedder shape: a batch of texts in, one vector each out."""
    return [embed_one(text) for text in texts]


class ScriptedLLM(BaseLLM):
    """Answers memory's structured questions plainly and an agent's task with ``answer``.

    The agent's answer names ``fact`` when its prompt holds it (a recalled memory).
    """

    fact: str = ""
    answer: str = "Done."

    def supports_function_calling(self) -> bool:
        return True

    def call(self, messages: Any, *args: Any, response_model: Any = None, **kw: Any) -> Any:
        text = messages if isinstance(messages, str) else str(messages)
        if response_model is ExtractedMemories:
            return ExtractedMemories(memories=[self.fact] if self.fact else [])
        if response_model is MemoryAnalysis:
            return MemoryAnalysis(suggested_scope="/facts", categories=["fact"], importance=0.8)
        if response_model is QueryAnalysis:
            return QueryAnalysis(recall_queries=["the fact"], complexity="simple")
        if response_model is ConsolidationPlan:
            return ConsolidationPlan(insert_new=True)
        if response_model is not None:
            return response_model()
        said = self.answer
        if self.fact and self.fact in text:
            said = f"I remember: {self.fact}"
        return said
