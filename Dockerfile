# The action's image, in two stages: the dependencies are installed and pruned in the first, and only what runs
# is copied into the second (no pip cache, tests, C headers or sources, type stubs or docs of any wheel).
#
# BASE is the official image the release builds from, pinned by digest (Dependabot proposes new digests). A
# machine that cannot reach a registry builds a stand-in locally (.ci/container-engine) and passes
# `--build-arg BASE=python:3.11-slim-bookworm`; the tests and benchmarks/bench_container.py do that.
ARG BASE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

FROM ${BASE} AS deps
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# Every package from requirements.lock (pyproject.toml's ranges with every extra, each at one version with its
# hashes), in a layer that changes only when the lock does. scipy serves one function, the sparse assignment of
# expected_tool_calls (scipy.sparse.csgraph, which loads scipy.linalg): its other subpackages, 60 MB, are
# removed, and the final stage runs that assignment, so a scipy that needs one of them fails the build.
COPY requirements.lock /tmp/requirements.lock
RUN pip install --require-hashes --no-deps --no-compile --target /deps -r /tmp/requirements.lock \
 && find /deps -depth -type d \( -name tests -o -name __pycache__ -o -name include \) -exec rm -rf {} + \
 && find /deps -type f \( -name '*.pyi' -o -name '*.pxd' -o -name '*.pyx' -o -name '*.c' -o -name '*.h' \
      -o -name '*_test.py' -o -name 'test_*.py' \) -delete \
 && rm -rf /deps/bin /deps/nltk/test \
 && cd /deps/scipy && rm -rf cluster constants datasets differentiate fft fftpack integrate interpolate io misc ndimage \
      odr optimize signal spatial special stats \
 && python -m compileall -q -j 0 /deps

FROM ${BASE}
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/app:/deps
COPY --from=deps /deps /deps
COPY agentci_action /app/agentci_action
COPY entrypoint.py /app/entrypoint.py
RUN python -m compileall -q /app \
 && python -c "from agentci_action.engine.call_matching import assign; assert len(assign([0, 0, 1], [0, 1, 0], 2, 2, [1, 1])) == 2"

ENTRYPOINT ["python", "/app/entrypoint.py"]
