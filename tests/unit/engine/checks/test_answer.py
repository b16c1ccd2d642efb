"""Answer vs reference.

Normalised exact match, ROUGE, BLEU (hand-computed), semantic similarity through the real openai SDK against a local
embeddings server (retries, cache, honest skips).
"""

import json

import pytest
from fakes.llm_server import FakeLLMServer

from agentci_action._util.errors import InputError
from agentci_action.engine.checks.answer import (
    NoEmbedder,
    bleu,
    cosine_similarity,
    evaluate,
    normalized_exact_match,
    rouge_f1,
)
from agentci_action.engine.judge.embeddings import EmbeddingCache, OpenAIEmbedder, build_embedder
from agentci_action.engine.results import Status
from agentci_action.model_access.providers import OpenAIProvider
from agentci_action.model_access.retries import RetryPolicy
from agentci_action.spec.check_models import AnswerChecks
from agentci_action.spec.models import JudgeConfig

REFERENCE = "the cat sat on the mat"
ANSWER = "the cat lay on the mat"


def by_name(checks):
    return {c.name: c for c in checks}


def test_normalized_exact_match_trims_and_lowercases():
    assert normalized_exact_match("  Paris\n", "paris")
    assert not normalized_exact_match("Paris.", "paris")


def test_rouge_on_a_hand_computed_pair():
    # unigrams: 5 of 6 shared (the×2, cat, on, mat) → P = R = F1 = 5/6
    # bigrams: the-cat, on-the, the-mat shared, 3 of 5 → 0.6
    # LCS: "the cat on the mat", 5 of 6 tokens → 5/6
    scores = rouge_f1(ANSWER, REFERENCE)
    assert scores == pytest.approx({"rouge1": 5 / 6, "rouge2": 0.6, "rougeL": 5 / 6})
    assert rouge_f1("the cats", "the cat")["rouge1"] == 1.0  # Porter stemmer


def test_bleu_on_a_hand_computed_pair():
    # n-gram precisions 5/6, 3/5, 1/4 and 0/3, the zero smoothed to 1/(2·3); brevity penalty 1
    expected = (5 / 6 * 3 / 5 * 1 / 4 * 1 / 6) ** 0.25
    assert bleu(ANSWER, REFERENCE) == pytest.approx(expected, abs=1e-4)
    assert bleu(REFERENCE, REFERENCE) == 1.0
    assert bleu("", REFERENCE) == 0.0


def test_cosine_is_clamped_to_unit_interval():
    assert cosine_similarity([3, 4, 0], [4, 3, 0]) == pytest.approx(24 / 25)
    assert cosine_similarity([1, 0], [-1, 0]) == 0.0
    assert cosine_similarity([0, 0], [1, 0]) == 0.0


def test_thresholds_and_severity_override():
    group = AnswerChecks(
        normalized_exact_match=True,
        min_rouge_1=0.8,
        min_rouge_2=0.7,
        min_rouge_l=0.9,
        min_bleu=0.3,
        severity={"min_rouge_l": "warn"},
    )
    checks = by_name(evaluate(group, ANSWER, REFERENCE, None))
    assert checks["normalized_exact_match"].status is Status.FAIL
    assert checks["min_rouge_1"].status is Status.PASS and checks["min_rouge_1"].data["value"] == pytest.approx(5 / 6)
    assert checks["min_rouge_2"].status is Status.FAIL
    assert checks["min_rouge_2"].message == "rouge2 F1 0.6 < min 0.7"
    assert checks["min_rouge_l"].status is Status.WARN and checks["min_rouge_l"].data["severity"] == "warn"
    assert checks["min_bleu"].status is Status.PASS


def test_without_reference_every_check_is_not_applicable():
    checks = evaluate(AnswerChecks(min_rouge_l=0.5, min_bleu=0.0, normalized_exact_match=False), ANSWER, None, None)
    assert [(c.name, c.status, c.data["value"]) for c in checks] == [
        ("min_rouge_l", Status.SKIP, None),
        ("min_bleu", Status.SKIP, None),
    ]
    assert checks[0].message == "min_rouge_l skipped: the query has no reference_answer"


def test_unknown_severity_key_is_rejected():
    with pytest.raises(ValueError, match=r"severity\.min_blue"):
        AnswerChecks(min_bleu=0.2, severity={"min_blue": "warn"})


# ---- semantic similarity through the real SDK ----------------------------------------------------------


def embedder_for(server: FakeLLMServer, cache: EmbeddingCache):
    config = JudgeConfig(embedding_base_url=server.openai_url, embedding_model="embed-small")
    return build_embedder(config, cache, {"OPENAI_API_KEY": "sk-test-local"})


FAST = RetryPolicy(initial_wait=0.001, max_wait=0.01, max_retry_after=0.05)


def local_embedder(server: FakeLLMServer, timeout_s: float = 5.0, attempts: int = 3) -> OpenAIEmbedder:
    provider = OpenAIProvider("sk-test-local", server.openai_url, timeout_s, 64)
    return OpenAIEmbedder(provider, "embed-small", EmbeddingCache(), attempts, FAST)


def test_semantic_similarity_from_the_provider_and_cached(tmp_path):
    group = AnswerChecks(min_semantic_similarity=0.9)
    cache_file = tmp_path / "embeddings.json"
    with FakeLLMServer(vectors={ANSWER: [3, 4, 0], REFERENCE: [4, 3, 0]}) as server:
        cache = EmbeddingCache(cache_file)
        [check] = evaluate(group, ANSWER, REFERENCE, embedder_for(server, cache))
        assert check.status is Status.PASS and check.data["value"] == pytest.approx(0.96)
        [request] = server.received
        assert (
            request.path == "/v1/embeddings"
            and request.body["model"] == "embed-small"
            and request.body["input"] == [ANSWER, REFERENCE]
        )
        assert request.headers["authorization"] == "Bearer sk-test-local"
        cache.save()
        # a rerun with a fresh process reading the cache file makes no request
        [again] = evaluate(group, ANSWER, REFERENCE, embedder_for(server, EmbeddingCache(cache_file)))
        assert again.data["value"] == pytest.approx(0.96) and server.count == 1
    saved = json.loads(cache_file.read_text())
    assert saved["version"] == 1 and len(saved["vectors"]) == 2


@pytest.mark.parametrize(
    "content, line, message",
    [
        ("[]", 1, "not an AgentCI embedding cache (expected version 1 and a `vectors` object)"),
        ('{"version": 0, "vectors": {}}', 1, "not an AgentCI embedding cache"),
        (
            '{\n "version": 1,\n "vectors": {\n  "k1": [0.1, 0.2],\n  "k2": "not a list"\n }\n}',
            5,
            "embedding cache entry 'k2' is not a list of numbers",
        ),
        ('{\n "version": 1,\n "vectors": {,}\n}', 3, "embedding cache is not valid JSON"),
    ],
)
def test_a_damaged_embedding_cache_names_file_and_line(tmp_path, content, line, message):
    path = tmp_path / "embeddings.json"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        EmbeddingCache(path)
    (problem,) = caught.value.problems
    assert (
        (problem.file, problem.line) == (str(path), line)
        and message in problem.message
        and "delete it" in problem.message
    )


def test_the_embedding_cache_keeps_vectors_another_run_wrote_meanwhile(tmp_path):
    path = tmp_path / "embeddings.json"
    ours, theirs = EmbeddingCache(path), EmbeddingCache(path)
    theirs.put("theirs", [1.0, 0.0])
    assert theirs.save()
    ours.put("ours", [0.0, 1.0])
    assert ours.save() and not ours.save()
    reloaded = EmbeddingCache(path)
    assert (reloaded.get("theirs"), reloaded.get("ours")) == ([1.0, 0.0], [0.0, 1.0])
    assert not (tmp_path / "embeddings.json.partial").exists()


def test_rate_limit_is_retried_after_the_servers_delay():
    with FakeLLMServer() as server:
        server.fail_next("429", retry_after=0)
        server.fail_next("500")
        [check] = evaluate(AnswerChecks(min_semantic_similarity=0.5), ANSWER, REFERENCE, local_embedder(server))
        assert check.status is Status.PASS and server.count == 3


def test_a_long_retry_after_is_capped_and_a_timeout_is_retried():
    with FakeLLMServer() as server:
        server.fail_next("429", retry_after=30)
        server.fail_next("slow", seconds=1.0)
        [check] = evaluate(
            AnswerChecks(min_semantic_similarity=0.5), ANSWER, REFERENCE, local_embedder(server, timeout_s=0.3)
        )
        assert check.status is Status.PASS and server.count == 3  # 429, timed out, answered


def test_persistent_server_error_is_an_infra_error_not_a_pass():
    with FakeLLMServer() as server:
        server.fail_next("500", times=10)
        [check] = evaluate(AnswerChecks(min_semantic_similarity=0.5), ANSWER, REFERENCE, local_embedder(server))
        assert (
            check.status is Status.ERROR
            and check.message.startswith("[INFRA]")
            and "HTTP 500 after 3 attempt(s)" in check.message
        )
        assert server.count == 3
        assert "sk-test-local" not in check.message


def test_client_errors_are_not_retried():
    with FakeLLMServer() as server:
        server.fail_next("echo")  # a 400 quoting the credentials back
        [check] = evaluate(
            AnswerChecks(min_semantic_similarity=0.5), ANSWER, REFERENCE, embedder_for(server, EmbeddingCache())
        )
        assert (
            check.status is Status.ERROR
            and server.count == 1
            and "HTTP 400" in check.message
            and "sk-test-local" not in check.message
        )


def test_no_provider_skips_with_the_reason():
    embedder = build_embedder(JudgeConfig(), EmbeddingCache(), {})
    assert isinstance(embedder, NoEmbedder)
    [check] = evaluate(AnswerChecks(min_semantic_similarity=0.5), ANSWER, REFERENCE, embedder)
    assert check.status is Status.SKIP and "OPENAI_API_KEY is not set" in check.message
    [check] = evaluate(AnswerChecks(min_semantic_similarity=0.5), ANSWER, REFERENCE, None)
    assert check.status is Status.SKIP and "no embedding provider is configured" in check.message


def test_empty_answer_scores_zero_without_a_request():
    with FakeLLMServer() as server:
        [check] = evaluate(
            AnswerChecks(min_semantic_similarity=0.5), "  ", REFERENCE, embedder_for(server, EmbeddingCache())
        )
        assert check.status is Status.FAIL and check.data["value"] == 0.0 and server.count == 0
