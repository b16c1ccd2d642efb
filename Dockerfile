# The action's image: the dependencies are installed, pruned and byte-compiled in one stage; the base, stripped of
# what only installs or documents software, gets them in another; the image is that stage flattened into one layer,
# so nothing deleted from the base is still shipped underneath.
#
# BASE is the official image the release builds from, pinned by digest (Dependabot proposes new digests). A
# machine that cannot reach a registry builds a stand-in locally (.ci/container-engine) and passes
# `--build-arg BASE=python:3.11-slim-bookworm`; the tests and benchmarks/bench_container.py do that.
ARG BASE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

FROM ${BASE} AS deps
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# strip and readelf, for this stage only; bookworm's binutils release, whatever Debian revision (a security fix) is current
RUN apt-get update -q && apt-get install -y -q --no-install-recommends "binutils=2.40-*"
# Every package from requirements.lock (pyproject.toml's ranges with every extra, each at one version with its
# hashes), without their tests, C headers and sources, type stubs and scripts; the extension modules that carry
# symbols lose those not needed to link (not the ones auditwheel patched to find bundled libraries: stripping a
# patched file can break it, and the bundled libraries stay as built). Then bytecode only: each module is
# compiled beside its source (-b) and the source removed, which halves the pure-Python packages and spares every
# start the compilation (a traceback through a dependency names file and line, without the line's text).
COPY requirements.lock /tmp/requirements.lock
RUN pip install --require-hashes --no-deps --no-compile --target /deps -r /tmp/requirements.lock \
 && find /deps -depth -type d \( -name tests -o -name __pycache__ -o -name include \) -exec rm -rf {} + \
 && find /deps -type f \( -name '*.pyi' -o -name '*.pxd' -o -name '*.pyx' -o -name '*.c' -o -name '*.h' \
      -o -name '*_test.py' -o -name 'test_*.py' \) -delete \
 && rm -rf /deps/bin /deps/nltk/test \
 && find /deps -name '*.so*' -not -path '*.libs/*' -exec sh -c \
      'readelf -d "$1" | grep -q "R[UN]*PATH" || strip --strip-unneeded "$1"' _ {} \; \
 && python -m compileall -q -b -j 0 /deps \
 && find /deps -name '*.py' -delete

FROM ${BASE} AS runtime
# Nothing installs software or reads documentation at run time: pip, setuptools and wheel (and their bundled
# wheels), the standard library's IDLE, Tk, 2to3, pydoc topics and test suite, manuals, docs and translations go;
# so do Perl (only dpkg's scripts use it) and glibc's iconv converters (Python's codecs are its own). The rest of
# the standard library, and our package, are byte-compiled once here (unchecked: the sources stay for tracebacks,
# never read on import; the official image ships its standard library without bytecode).
RUN set -eu; \
    stdlib=$(python -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'); \
    for site in $(python -c 'import site; print(" ".join(site.getsitepackages()))') /usr/lib/python3/dist-packages; do \
      rm -rf "$site"/pip "$site"/pip-* "$site"/setuptools "$site"/setuptools-* "$site"/pkg_resources \
             "$site"/_distutils_hack "$site"/distutils-precedence.pth "$site"/wheel "$site"/wheel-*; \
    done; \
    rm -rf "$stdlib"/ensurepip "$stdlib"/idlelib "$stdlib"/tkinter "$stdlib"/turtledemo "$stdlib"/lib2to3 \
           "$stdlib"/pydoc_data "$stdlib"/test /usr/share/python-wheels /usr/local/bin/pip* /usr/bin/pip* \
           /usr/local/bin/idle* \
           /usr/share/doc /usr/share/man /usr/share/info /usr/share/locale /var/cache/* /var/lib/apt/lists/* \
           /usr/bin/perl* /usr/lib/*-linux-gnu/perl* /usr/share/perl* /usr/lib/*-linux-gnu/gconv; \
    python -m compileall -q -j 0 --invalidation-mode unchecked-hash "$stdlib"
COPY --from=deps /deps /deps
COPY agentci_action /app/agentci_action
COPY entrypoint.py /app/entrypoint.py
ENV PYTHONPATH=/app:/deps
# The assignment, JSON Schema, ROUGE, BLEU, the tokenizer, numpy and the SDKs the judge and the comment use, run
# once: a pruned file any of them needs fails the build here.
RUN python -m compileall -q -j 0 --invalidation-mode unchecked-hash /app \
 && python -c "import github, anthropic, openai, numpy; \
from agentci_action.spec.json_schemas import local_validator; local_validator({'type': 'object'}).validate({}); \
from agentci_action.engine.call_matching import assign; assert len(assign([0, 0, 1], [0, 1, 0], 2, 2, [1, 1])) == 2; \
from agentci_action.trace.tokenizer import tokenizer_for; assert tokenizer_for('gpt-4o').count('hello world') == 2; \
from agentci_action.engine.checks.answer import bleu, rouge_f1; assert rouge_f1('a b', 'a b')['rougeL'] == bleu('a b c d', 'a b c d') == 1"

FROM scratch
# The whole filesystem on purpose: one layer of exactly the files the runtime stage kept, so nothing it deleted from
# the base (pip, docs, Perl, ...) is still shipped in a layer underneath.
# hadolint ignore=DL3067
COPY --from=runtime / /
# PYDANTIC_DISABLE_PLUGINS: no installed package is a pydantic plugin; looking for one read every package's metadata
ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/app:/deps PYDANTIC_DISABLE_PLUGINS=1
ENTRYPOINT ["python", "/app/entrypoint.py"]
